/* test_transport_choice.c - which transport the channels between nodes
 * use (sl_cluster_transport, cluster/cluster_client.c): for every value of
 * sluice.transport, nodes forked on this host or daemons, with and without
 * an RDMA device on every node; the errors name the node and say what to
 * do.  The cluster is built by hand (no processes): the choice depends only
 * on what the nodes reported in HELLO. */
/* cmocka.h needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "sluice/cluster/cluster_client.h"
#include "sluice/net/node_frames.h"

/* n nodes; rdma_mask bit i: node i has a device. */
static sl_cluster *make(sl_cluster *c, sl_cluster_node *nodes, int n,
                        bool spawned, unsigned rdma_mask) {
  memset(c, 0, sizeof *c);
  c->n = n;
  c->nodes = nodes;
  c->spawned = spawned;
  static char addr[4][32];
  for (int i = 0; i < n; i++) {
    memset(&nodes[i], 0, sizeof nodes[i]);
    snprintf(addr[i], sizeof addr[i], "10.0.0.%d:7001", i + 1);
    nodes[i].address = addr[i];
    nodes[i].healthy = true;
    nodes[i].rdma = (rdma_mask >> i) & 1;
    snprintf(nodes[i].rdma_device, sizeof nodes[i].rdma_device, "%s",
             nodes[i].rdma ? "mlx5_0 10.0.0.9 1 Ethernet"
                           : "no RDMA device found");
  }
  return c;
}

static int choose(const sl_cluster *c, const char *want, char *device,
                  sl_error *err) {
  int t = -1;
  int rc = sl_cluster_transport(c, want, &t, device, 64, err);
  return rc == SL_OK ? t : rc;
}

static void test_auto(void **state) {
  (void)state;
  sl_cluster c;
  sl_cluster_node nodes[3];
  sl_error err = {0};
  char dev[64];
  /* One host: shared memory, whatever the devices. */
  assert_int_equal(choose(make(&c, nodes, 2, true, 3), "auto", dev, &err),
                   SL_XPORT_SHM);
  assert_string_equal(dev, "");
  assert_int_equal(choose(make(&c, nodes, 2, true, 3), NULL, dev, &err),
                   SL_XPORT_SHM);
  /* Daemons: verbs only when every node has a device. */
  assert_int_equal(choose(make(&c, nodes, 3, false, 7), "auto", dev, &err),
                   SL_XPORT_VERBS);
  assert_string_equal(dev, "mlx5_0");
  assert_int_equal(choose(make(&c, nodes, 3, false, 5), "auto", dev, &err),
                   SL_XPORT_TCP);
  assert_string_equal(dev, "");
  assert_int_equal(choose(make(&c, nodes, 3, false, 0), "auto", dev, &err),
                   SL_XPORT_TCP);
  assert_null(err.message);
}

static void test_forced(void **state) {
  (void)state;
  sl_cluster c;
  sl_cluster_node nodes[3];
  sl_error err = {0};
  char dev[64];
  assert_int_equal(choose(make(&c, nodes, 2, true, 0), "tcp", dev, &err),
                   SL_XPORT_TCP);
  assert_int_equal(choose(make(&c, nodes, 3, false, 7), "tcp", dev, &err),
                   SL_XPORT_TCP);
  assert_int_equal(choose(make(&c, nodes, 2, true, 0), "shm", dev, &err),
                   SL_XPORT_SHM);
  assert_int_equal(choose(make(&c, nodes, 2, true, 3), "verbs", dev, &err),
                   SL_XPORT_VERBS);
  assert_string_equal(dev, "mlx5_0");
  assert_null(err.message);
}

static void test_refused(void **state) {
  (void)state;
  sl_cluster c;
  sl_cluster_node nodes[3];
  sl_error err = {0};
  char dev[64];
  /* Daemons cannot share memory. */
  assert_int_equal(choose(make(&c, nodes, 2, false, 0), "shm", dev, &err),
                   SL_EINVAL);
  assert_non_null(strstr(err.message, "only nodes forked on this host"));
  sl_error_clear(&err);
  /* verbs without a device on node 1: the message names it and says why. */
  assert_int_equal(choose(make(&c, nodes, 3, false, 5), "verbs", dev, &err),
                   SL_EINVAL);
  assert_non_null(strstr(err.message, "node 1 (10.0.0.2:7001) has none"));
  assert_non_null(strstr(err.message, "no RDMA device found"));
  assert_non_null(strstr(err.message, "ibv_devinfo"));
  sl_error_clear(&err);
  assert_int_equal(choose(make(&c, nodes, 2, true, 0), "rdma", dev, &err),
                   SL_EINVAL);
  assert_non_null(strstr(err.message, "unknown transport 'rdma'"));
  sl_error_clear(&err);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_auto),
      cmocka_unit_test(test_forced),
      cmocka_unit_test(test_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
