/* hw_bounds.c - what this machine allows, measured beside the engine's
 * numbers so that every throughput table can say how close it comes:
 *
 *   - memcpy bandwidth, one thread: 256 MiB copied between two buffers,
 *     median of 7 (bench_util.h) - the bound for moving records in memory;
 *   - memcpy bandwidth, two threads at once, each its own pair of buffers:
 *     the bound for two workers;
 *   - loopback TCP stream bandwidth: a forked process writes 1 MiB blocks
 *     into a connected socket on 127.0.0.1, this one reads them, for 1 GiB,
 *     median of 5 (bench_util.h, the bound channel_throughput measures
 *     too) - the bound for the tcp transport between local nodes.
 *
 * Prints one "name median min max" line per bound (bytes/s), for
 * bench/run:
 *
 *   build/bench/hw_bounds
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"

#define TCP_BLOCK ((size_t)1 << 20)
#define TCP_TOTAL ((size_t)1 << 30)

/* One thread's median, slowest and fastest copy. */
static void *copy_thread(void *out) {
  double *v = out;
  v[0] = bench_memcpy_bandwidth_spread(&v[1], &v[2]);
  return NULL;
}

/* Two threads copying at once: the sum of their medians (and of their
 * slowest and of their fastest copies) in v. */
static void memcpy_two_threads(double v[3]) {
  double bw[2][3] = {{0}};
  pthread_t t;
  if (pthread_create(&t, NULL, copy_thread, bw[1]) == 0) {
    copy_thread(bw[0]);
    pthread_join(t, NULL);
  }
  for (int i = 0; i < 3; i++)
    v[i] = bw[0][i] + bw[1][i];
}

/* One transfer of TCP_TOTAL bytes over a fresh loopback connection, in
 * bytes/s; 0 on failure. */
static double tcp_once(const unsigned char *src) {
  double s = bench_loopback_tcp_seconds(src, TCP_BLOCK, TCP_TOTAL, TCP_BLOCK);
  return s > 0 ? (double)TCP_TOTAL / s : 0;
}

int main(void) {
  unsigned char *src = calloc(1, TCP_BLOCK);
  double tcp[5];
  for (int i = 0; i < 5; i++)
    tcp[i] = src ? tcp_once(src) : 0;
  free(src);
  qsort(tcp, 5, sizeof(double), bench_cmp_double);
  double one[3], two[3];
  copy_thread(one);
  memcpy_two_threads(two);
  printf("memcpy_1thread %.0f %.0f %.0f\n", one[0], one[1], one[2]);
  printf("memcpy_2threads %.0f %.0f %.0f\n", two[0], two[1], two[2]);
  printf("tcp_loopback %.0f %.0f %.0f\n", tcp[2], tcp[0], tcp[4]);
  return tcp[2] > 0 ? 0 : 1;
}
