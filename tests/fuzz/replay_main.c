/* replay_main.c - the main of a fuzz target outside libFuzzer: runs
 * LLVMFuzzerTestOneInput once on every file given (directories: every
 * file in them, in name order), so that the inputs a fuzzer once crashed
 * on (tests/fuzz/regressions) stay fixed in every build, with gcc and
 * without sanitizers too.
 *
 *   fuzz_X_replay FILE|DIR...     replay; exit 0 when nothing aborted and
 *                                 every DIR held at least one input (an
 *                                 empty or missing corpus replays nothing,
 *                                 which must not pass as a replay)
 *   fuzz_X_replay --seeds DIR     write the target's seed inputs into DIR
 *                                 (targets that make their own) */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int fuzz_write_seeds(const char *dir);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return -1;
  }
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  size_t k;
  while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
    n += k;
    if (n == cap)
      buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (!buf)
    return -1;
  /* An exact-size copy, as libFuzzer gives: reads past it are caught. */
  uint8_t *exact = malloc(n ? n : 1);
  memcpy(exact, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(exact, n);
  free(exact);
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, int *count) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "replay: cannot open %s\n", dir);
    return -1;
  }
  char **names = NULL;
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    names = realloc(names, (n + 1) * sizeof *names);
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, by_name);
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
      rc |= replay_file(path);
      (*count)++;
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--seeds") == 0) {
    if (!fuzz_write_seeds) {
      fprintf(stderr, "replay: this target makes no seeds of its own\n");
      return 2;
    }
    return fuzz_write_seeds(argv[2]) == 0 ? 0 : 1;
  }
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE|DIR...  |  --seeds DIR\n", argv[0]);
    return 2;
  }
  int rc = 0, count = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      int before = count;
      rc |= replay_dir(argv[i], &count);
      if (count == before) {
        fprintf(stderr, "replay: %s holds no inputs (nothing replayed)\n",
                argv[i]);
        rc = -1;
      }
    } else {
      rc |= replay_file(argv[i]);
      count++;
    }
  }
  printf("replayed %d inputs\n", count);
  return rc == 0 ? 0 : 1;
}
