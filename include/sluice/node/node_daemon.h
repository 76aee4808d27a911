/* node_daemon.h - `sluice node`: the daemon that serves coordinators
 * (node/node_daemon.c).  Its own header, not the cluster client's: the
 * cluster client dials nodes, the daemon is what it dials, and only the
 * program's main starts it. */
#ifndef SLUICE_NODE_NODE_DAEMON_H
#define SLUICE_NODE_NODE_DAEMON_H

#include "sluice/common/error.h"
#include "sluice/net/auth.h"

/* Where `sluice node` listens when not told: loopback only. */
#define SL_NODE_DEFAULT_PORT 7433
/* Connections a daemon lets prove the secret at once, by default and at
 * most (--max-pending). */
#define SL_NODE_DEFAULT_MAX_PENDING 64
#define SL_NODE_MAX_PENDING 1024

/* `sluice node`'s options (node_daemon.c). */
typedef struct sl_node_daemon_options {
  const char *listen;   /* "host:port" */
  const char *data_dir; /* --data-dir: files tables may open; NULL: none */
  const char *user;     /* --user: switch to it after binding; NULL: stay */
  int max_pending;      /* connections proving the secret at once */
} sl_node_daemon_options;

/* `sluice node --listen ADDR:PORT --secret-file FILE ...`: bind, confine
 * connector paths (path_policy.h), switch user, then accept peers, each
 * served by a process of its own once it proved it knows the secret
 * (auth.h; refusals are logged on stderr with the peer's address).
 * Returns only when it cannot start (SL_EINVAL: its options) or the
 * socket fails. */
int sl_node_listen(const sl_node_daemon_options *o, const sl_secret *secret,
                   sl_error *err);

#endif
