/* auth_gate.h - connections that prove the cluster secret (auth.h) off the
 * accepting thread: each proves it in a thread of its own, so a peer that
 * connects and stays silent holds up nothing but its own proof (10 s at
 * most), and the accepting thread goes on serving the others.  Internal to
 * runtime/ (the stage nodes' link reader, stage_link.c, and the accepting
 * end of a tcp channel, channel_endpoint.c).
 *
 * Ownership: the gate owns every descriptor given to it until
 * auth_gate_take hands a proved one back; auth_gate_free shuts the
 * pending ones down, waits for their threads and closes them. */
#ifndef SLUICE_AUTH_GATE_H
#define SLUICE_AUTH_GATE_H

#include <stddef.h>

#include "sluice/net/auth.h"

typedef struct auth_gate auth_gate;

/* what: for the log line of a refusal ("a link"). */
auth_gate *auth_gate_new(const sl_secret *secret, const char *what);
/* Readable (POLLIN) when a connection has finished its proof. */
int auth_gate_fd(const auth_gate *g);
/* Prove fd (accepted just now); at most 16 at once: beyond that fd is
 * closed at once. */
void auth_gate_add(auth_gate *g, int fd);
/* A connection that proved the secret, or -1 when none is ready; the
 * refused ones are logged and closed meanwhile. */
int auth_gate_take(auth_gate *g);
/* Why the last refused connection was refused ("" when none was), copied
 * into buf: for the error when no connection proves the secret in time. */
void auth_gate_last_refusal(auth_gate *g, char *buf, size_t n);
void auth_gate_free(auth_gate *g);

#endif
