/* memory_account.c - one query's memory on this host, summed over its
 * holders in this process and, through a shared-memory counter, over its
 * processes on the host, against the memory limit (memory_account.h). */
#include "sluice/state/memory_account.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice/common/error.h"
#include "sluice/common/strbuf.h"

/* ---- the host's counter -------------------------------------------------- */

#define HOST_MAGIC 0x4d454d53u /* "SMEM" */
#define HOST_SLOTS 128         /* processes of one shell's query on a host */
#define WHO_LEN 40

typedef struct host_slot {
  _Atomic int32_t pid;    /* 0: free; -1: being taken or emptied */
  _Atomic uint64_t start; /* the process's start time: pids are reused */
  _Atomic uint64_t bytes; /* what its accounts hold */
  char who[WHO_LEN];
} host_slot;

typedef struct host_seg {
  _Atomic uint32_t magic;
  uint32_t nslots;
  _Atomic uint64_t total; /* the sum of every slot's bytes */
  host_slot slot[HOST_SLOTS];
} host_seg;

struct sl_memory_host {
  host_seg *seg;
  int slot;
};

/* This process's place on the host's counter (one at a time). */
static pthread_mutex_t proc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sl_memory_host proc_host;
static uint64_t proc_key;
static pid_t proc_pid; /* who attached: a forked child inherits this */
static bool proc_exit_hook;

void sl_memory_host_name(uint64_t shell_pid, char *out, size_t n) {
  snprintf(out, n, "/sluice-mem-%u-%llu", (unsigned)geteuid(),
           (unsigned long long)shell_pid);
}

/* A process's start time (field 22 of /proc/PID/stat), 0 if unknown;
 * *zombie: it has exited (state Z or X) and waits for its parent. */
static uint64_t proc_stat(pid_t pid, bool *zombie) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *p = strrchr(buf, ')'); /* the name may hold spaces */
  if (zombie)
    *zombie = p && (p[1] == ' ') && (p[2] == 'Z' || p[2] == 'X');
  unsigned long long v = 0;
  for (int field = 2; p && *p; p++)
    if (*p == ' ' && ++field == 22) {
      v = strtoull(p + 1, NULL, 10);
      break;
    }
  return v;
}

static bool alive(pid_t pid, uint64_t start) {
  if (kill(pid, 0) != 0 && errno != EPERM)
    return false;
  bool zombie = false;
  uint64_t now = proc_stat(pid, &zombie);
  return !zombie && (now == 0 || start == 0 || now == start);
}

/* Take the bytes of slot i out of the sum and free it. */
static void empty_slot(host_seg *seg, int i) {
  uint64_t b = atomic_exchange(&seg->slot[i].bytes, 0);
  atomic_fetch_sub(&seg->total, b);
  atomic_store(&seg->slot[i].pid, 0);
}

/* Free the slots of processes that died holding bytes; the sum after. */
static uint64_t reap_dead(struct sl_memory_host *h) {
  host_seg *seg = h->seg;
  for (int i = 0; i < HOST_SLOTS; i++) {
    int32_t pid = atomic_load(&seg->slot[i].pid);
    if (i == h->slot || pid <= 0 ||
        alive(pid, atomic_load(&seg->slot[i].start)))
      continue;
    if (atomic_compare_exchange_strong(&seg->slot[i].pid, &pid, -1))
      empty_slot(seg, i);
  }
  return atomic_load(&seg->total);
}

static int take_slot(host_seg *seg, const char *who) {
  for (int i = 0; i < HOST_SLOTS; i++) {
    int32_t free_pid = 0;
    if (!atomic_compare_exchange_strong(&seg->slot[i].pid, &free_pid, -1))
      continue;
    atomic_store(&seg->slot[i].start, proc_stat(getpid(), NULL));
    atomic_store(&seg->slot[i].bytes, 0);
    snprintf(seg->slot[i].who, WHO_LEN, "%s", who);
    atomic_store(&seg->slot[i].pid, (int32_t)getpid());
    return i;
  }
  return -1;
}

/* Leave the counter: this process's bytes out of the sum; the segment's
 * name goes with its shell, or with the last process that leaves. */
static void detach_locked(void) {
  host_seg *seg = proc_host.seg;
  if (!seg)
    return;
  if (proc_pid == getpid()) {
    empty_slot(seg, proc_host.slot);
    bool others = false;
    for (int i = 0; i < HOST_SLOTS && !others; i++) {
      int32_t pid = atomic_load(&seg->slot[i].pid);
      others = pid > 0 && alive(pid, atomic_load(&seg->slot[i].start));
    }
    if (!others || proc_key == (uint64_t)getpid()) {
      char name[64];
      sl_memory_host_name(proc_key, name, sizeof name);
      shm_unlink(name);
    }
  }
  munmap(seg, sizeof *seg);
  proc_host.seg = NULL;
  proc_key = 0;
}

static void detach_at_exit(void) {
  pthread_mutex_lock(&proc_lock);
  detach_locked();
  pthread_mutex_unlock(&proc_lock);
}

/* Open (or make) the shell's segment; NULL when it cannot be had safely
 * (no /dev/shm, or a segment of that name that is not ours alone). */
static host_seg *open_seg(uint64_t key) {
  char name[64];
  sl_memory_host_name(key, name, sizeof name);
  int fd = shm_open(name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return NULL;
  struct stat st;
  host_seg *seg = NULL;
  if (fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
      (st.st_mode & 077) == 0 &&
      (st.st_size == sizeof *seg || ftruncate(fd, sizeof *seg) == 0)) {
    void *p =
        mmap(NULL, sizeof *seg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    seg = p == MAP_FAILED ? NULL : p;
  }
  close(fd);
  if (!seg)
    return NULL;
  uint32_t none = 0;
  if (!atomic_compare_exchange_strong(&seg->magic, &none, HOST_MAGIC) &&
      none != HOST_MAGIC) {
    munmap(seg, sizeof *seg);
    return NULL;
  }
  return seg;
}

void sl_memory_host_join(uint64_t shell_pid, const char *who) {
  pthread_mutex_lock(&proc_lock);
  if (proc_host.seg && proc_pid != getpid()) {
    /* Inherited from the process that forked this one: its slot is not
     * this process's to free. */
    munmap(proc_host.seg, sizeof *proc_host.seg);
    proc_host.seg = NULL;
    proc_key = 0;
  }
  if (proc_host.seg && proc_key == shell_pid) {
    snprintf(proc_host.seg->slot[proc_host.slot].who, WHO_LEN, "%s", who);
    pthread_mutex_unlock(&proc_lock);
    return;
  }
  detach_locked();
  host_seg *seg = shell_pid ? open_seg(shell_pid) : NULL;
  int slot = seg ? take_slot(seg, who) : -1;
  if (seg && slot < 0) {
    struct sl_memory_host h = {seg, -1};
    reap_dead(&h);
    slot = take_slot(seg, who);
  }
  if (seg && slot < 0) { /* a full host: count this process alone */
    munmap(seg, sizeof *seg);
    seg = NULL;
  }
  if (seg) {
    proc_host.seg = seg;
    proc_host.slot = slot;
    proc_key = shell_pid;
    proc_pid = getpid();
    if (!proc_exit_hook)
      proc_exit_hook = atexit(detach_at_exit) == 0;
  }
  pthread_mutex_unlock(&proc_lock);
}

/* ---- the account --------------------------------------------------------- */

void sl_memory_account_init(sl_memory_account *a, uint64_t limit) {
  atomic_init(&a->held, 0);
  a->limit = limit;
  pthread_mutex_lock(&proc_lock);
  a->host = proc_host.seg && proc_pid == getpid() ? &proc_host : NULL;
  pthread_mutex_unlock(&proc_lock);
}

void sl_memory_account_close(sl_memory_account *a) {
  uint64_t left = atomic_exchange(&a->held, 0);
  if (a->host && left) {
    atomic_fetch_sub(&a->host->seg->slot[a->host->slot].bytes, left);
    atomic_fetch_sub(&a->host->seg->total, left);
  }
  a->host = NULL;
}

uint64_t sl_memory_charge(sl_memory_account *a, uint64_t *charged,
                          uint64_t now) {
  /* Unsigned arithmetic wraps, so adding (now - charged) also subtracts. */
  uint64_t d = now - *charged;
  uint64_t total = atomic_fetch_add(&a->held, d) + d;
  *charged = now;
  if (a->host) {
    host_seg *seg = a->host->seg;
    atomic_fetch_add(&seg->slot[a->host->slot].bytes, d);
    total = atomic_fetch_add(&seg->total, d) + d;
  }
  return total;
}

bool sl_memory_grew_over(sl_memory_account *a, uint64_t *charged, uint64_t now,
                         uint64_t *total) {
  bool grew = now > *charged;
  *total = sl_memory_charge(a, charged, now);
  if (grew && *total > a->limit && a->host)
    *total = reap_dead(a->host);
  return grew && *total > a->limit;
}

bool sl_memory_room_for(sl_memory_account *a, uint64_t more) {
  uint64_t total =
      a->host ? atomic_load(&a->host->seg->total) : atomic_load(&a->held);
  if (total + more > a->limit && a->host)
    total = reap_dead(a->host);
  return total + more <= a->limit && total + more >= total;
}

/* ", most in node 1 (pid 4711, 80.0 MiB)": the other process on this host
 * holding most of the query's memory; "" when none holds any. */
static void largest_other(const sl_memory_account *a, char *out, size_t n) {
  out[0] = '\0';
  if (!a->host)
    return;
  const host_seg *seg = a->host->seg;
  uint64_t most = 0;
  int at = -1;
  for (int i = 0; i < HOST_SLOTS; i++) {
    uint64_t b = atomic_load(&seg->slot[i].bytes);
    if (i != a->host->slot && atomic_load(&seg->slot[i].pid) > 0 && b > most) {
      most = b;
      at = i;
    }
  }
  if (at < 0)
    return;
  char who[WHO_LEN], m[32];
  memcpy(who, seg->slot[at].who, WHO_LEN);
  who[WHO_LEN - 1] = '\0';
  snprintf(out, n,
           " and its other processes on this host, most in %s (pid %d, %s)",
           who, (int)atomic_load(&seg->slot[at].pid),
           sl_bytes_text(most, m, sizeof m));
}

int sl_memory_over_error(sl_error *err, const sl_memory_account *a,
                         uint64_t part, uint64_t total, const char *advice,
                         const char *what, ...) {
  char holder[256], p[32], t[32], l[32], others[256] = "", where[160];
  va_list ap;
  va_start(ap, what);
  vsnprintf(holder, sizeof holder, what, ap);
  va_end(ap);
  largest_other(a, where, sizeof where);
  if (total > part)
    snprintf(others, sizeof others,
             " (%s with the query's other state in this process%s)",
             sl_bytes_text(total, t, sizeof t), where);
  return sl_error_set(
      err, SL_ENOMEM,
      "%s %s%s, over the memory limit of %s; SET 'sluice.memory-limit' "
      "higher%s%s",
      holder, sl_bytes_text(part, p, sizeof p), others,
      sl_bytes_text(a->limit, l, sizeof l), advice ? ", or " : "",
      advice ? advice : "");
}
