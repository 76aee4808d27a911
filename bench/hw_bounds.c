/* hw_bounds.c - what this machine allows, measured beside the engine's
 * numbers so that every throughput table can say how close it comes:
 *
 *   - memcpy bandwidth, one thread: 256 MiB copied between two buffers,
 *     median of 7 (bench_util.h) - the bound for moving records in memory;
 *   - memcpy bandwidth, two threads at once, each its own pair of buffers:
 *     the bound for two workers;
 *   - loopback TCP stream bandwidth: one thread writes 1 MiB blocks into a
 *     connected socket on 127.0.0.1, another reads them, for 1 GiB, median
 *     of 5 - the bound for the tcp transport between local nodes.
 *
 * Prints one "name value" line per bound (bytes/s), for bench/run:
 *
 *   build/bench/hw_bounds
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_util.h"

#define TCP_BLOCK ((size_t)1 << 20)
#define TCP_TOTAL ((size_t)1 << 30)

static void *copy_thread(void *out) {
  *(double *)out = bench_memcpy_bandwidth();
  return NULL;
}

/* Two threads copying at once: the sum of their bandwidths. */
static double memcpy_two_threads(void) {
  double bw[2];
  pthread_t t;
  if (pthread_create(&t, NULL, copy_thread, &bw[1]) != 0)
    return 0;
  copy_thread(&bw[0]);
  pthread_join(t, NULL);
  return bw[0] + bw[1];
}

static void *tcp_reader(void *arg) {
  int fd = *(int *)arg;
  char *buf = malloc(TCP_BLOCK);
  size_t got = 0;
  while (buf && got < TCP_TOTAL) {
    ssize_t n = read(fd, buf, TCP_BLOCK);
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  free(buf);
  return NULL;
}

/* One transfer of TCP_TOTAL bytes over a fresh loopback connection, in
 * bytes/s; 0 when a socket call fails (the reason on stderr). */
static double tcp_once(void) {
  int ls = socket(AF_INET, SOCK_STREAM, 0), w = -1, r = -1;
  struct sockaddr_in addr = {.sin_family = AF_INET};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  double rate = 0;
  char *buf = calloc(1, TCP_BLOCK);
  if (ls < 0 || !buf || bind(ls, (struct sockaddr *)&addr, sizeof addr) ||
      listen(ls, 1) || getsockname(ls, (struct sockaddr *)&addr, &len) ||
      (w = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
      connect(w, (struct sockaddr *)&addr, sizeof addr) ||
      (r = accept(ls, NULL, NULL)) < 0) {
    perror("hw_bounds: loopback tcp");
    goto out;
  }
  int one = 1;
  setsockopt(w, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  pthread_t t;
  if (pthread_create(&t, NULL, tcp_reader, &r) != 0)
    goto out;
  double t0 = sl_clock_seconds();
  size_t sent = 0;
  while (sent < TCP_TOTAL) {
    ssize_t n = write(w, buf, TCP_BLOCK);
    if (n <= 0)
      break;
    sent += (size_t)n;
  }
  pthread_join(t, NULL); /* the reader has everything */
  rate = (double)sent / (sl_clock_seconds() - t0);
out:
  free(buf);
  if (w >= 0)
    close(w);
  if (r >= 0)
    close(r);
  if (ls >= 0)
    close(ls);
  return rate;
}

int main(void) {
  double tcp[5];
  for (int i = 0; i < 5; i++)
    tcp[i] = tcp_once();
  qsort(tcp, 5, sizeof(double), bench_cmp_double);
  printf("memcpy_1thread %.0f\n", bench_memcpy_bandwidth());
  printf("memcpy_2threads %.0f\n", memcpy_two_threads());
  printf("tcp_loopback %.0f\n", tcp[2]);
  return tcp[2] > 0 ? 0 : 1;
}
