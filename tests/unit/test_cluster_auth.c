/* test_cluster_auth.c - the cluster secret's challenge-response (auth.h):
 * the same secret passes both ways; a wrong secret, a replayed answer,
 * garbage, silence and a cut answer are refused; the secret file's rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sluice/cluster/cluster_client.h"
#include "sluice/net/auth.h"
#include "sluice/net/channel.h"
#include "sluice/net/node_frames.h"
#include "sluice/session/session.h"

typedef struct side {
  int fd;
  const sl_secret *secret;
  int timeout_ms;
  int rc;
  sl_error err;
} side;

static void *accept_main(void *arg) {
  side *s = arg;
  s->rc = sl_auth_accept(s->fd, s->secret, s->timeout_ms, &s->err);
  return NULL;
}

static void *connect_main(void *arg) {
  side *s = arg;
  s->rc = sl_auth_connect(s->fd, s->secret, s->timeout_ms, &s->err);
  return NULL;
}

static void secret_of(const char *text, sl_secret *out) {
  char path[] = "/tmp/sluice_secret_XXXXXX";
  int fd = mkstemp(path); /* mode 600 */
  assert_true(fd >= 0);
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  sl_error err = {0};
  assert_int_equal(sl_secret_load(path, out, &err), SL_OK);
  unlink(path);
}

/* Both sides on a socketpair, each in its own thread. */
static void handshake(const sl_secret *a, const sl_secret *c, side *acc,
                      side *con) {
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  *acc = (side){sv[0], a, 2000, 0, {0}};
  *con = (side){sv[1], c, 2000, 0, {0}};
  pthread_t ta, tc;
  assert_int_equal(pthread_create(&ta, NULL, accept_main, acc), 0);
  assert_int_equal(pthread_create(&tc, NULL, connect_main, con), 0);
  pthread_join(ta, NULL);
  pthread_join(tc, NULL);
  close(sv[0]);
  close(sv[1]);
}

static void test_same_secret_passes(void **state) {
  (void)state;
  sl_secret s;
  secret_of("correct horse battery staple", &s);
  side acc, con;
  handshake(&s, &s, &acc, &con);
  assert_int_equal(acc.rc, SL_OK);
  assert_int_equal(con.rc, SL_OK);
}

static void test_wrong_secret_refused_both_ways(void **state) {
  (void)state;
  sl_secret a, c;
  secret_of("correct horse battery staple", &a);
  secret_of("correct horse battery stapler", &c);
  side acc, con;
  handshake(&a, &c, &acc, &con);
  assert_int_equal(acc.rc, SL_EPERM);
  assert_non_null(strstr(acc.err.message, "did not prove"));
  assert_int_equal(con.rc, SL_EPERM);
  assert_non_null(strstr(con.err.message, "refused"));
  sl_error_clear(&acc.err);
  sl_error_clear(&con.err);
}

/* The acceptor on sv[0] in a thread; the test speaks raw bytes on sv[1]. */
static pthread_t start_acceptor(const sl_secret *s, int timeout_ms, side *acc,
                                int *peer) {
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  *acc = (side){sv[0], s, timeout_ms, 0, {0}};
  *peer = sv[1];
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, accept_main, acc), 0);
  return t;
}

static void read_n(int fd, unsigned char *p, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t k = read(fd, p + got, n - got);
    assert_true(k > 0);
    got += (size_t)k;
  }
}

/* A connector's recorded answer, relayed between a real acceptor and a
 * real connector, is refused when replayed on a new connection. */
static void test_replayed_answer_refused(void **state) {
  (void)state;
  sl_secret s;
  secret_of("correct horse battery staple", &s);
  side acc, con;
  int to_acc;
  pthread_t ta = start_acceptor(&s, 2000, &acc, &to_acc);
  int cv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, cv), 0);
  con = (side){cv[0], &s, 2000, 0, {0}};
  pthread_t tc;
  assert_int_equal(pthread_create(&tc, NULL, connect_main, &con), 0);
  unsigned char hello[40], answer[72], reply[33];
  read_n(to_acc, hello, sizeof hello);
  assert_int_equal(write(cv[1], hello, sizeof hello), 40);
  read_n(cv[1], answer, sizeof answer); /* recorded */
  assert_int_equal(write(to_acc, answer, sizeof answer), 72);
  read_n(to_acc, reply, sizeof reply);
  assert_int_equal(write(cv[1], reply, sizeof reply), 33);
  pthread_join(ta, NULL);
  pthread_join(tc, NULL);
  assert_int_equal(acc.rc, SL_OK);
  assert_int_equal(con.rc, SL_OK);
  close(to_acc);
  close(acc.fd);
  close(cv[0]);
  close(cv[1]);

  /* The replay: a fresh challenge, the old answer. */
  ta = start_acceptor(&s, 2000, &acc, &to_acc);
  read_n(to_acc, hello, sizeof hello);
  assert_int_equal(write(to_acc, answer, sizeof answer), 72);
  read_n(to_acc, reply, sizeof reply);
  pthread_join(ta, NULL);
  assert_int_equal(reply[0], 0);
  assert_int_equal(acc.rc, SL_EPERM);
  sl_error_clear(&acc.err);
  close(to_acc);
  close(acc.fd);
}

static void test_garbage_refused(void **state) {
  (void)state;
  sl_secret s;
  secret_of("correct horse battery staple", &s);
  side acc;
  int peer;
  pthread_t t = start_acceptor(&s, 2000, &acc, &peer);
  const char *http = "GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: curl/7.88.1\r\n"
                     "Accept: */*\r\n\r\n";
  assert_int_equal(write(peer, http, strlen(http)), (ssize_t)strlen(http));
  pthread_join(t, NULL);
  assert_int_equal(acc.rc, SL_EPERM);
  assert_non_null(strstr(acc.err.message, "not a Sluice peer"));
  sl_error_clear(&acc.err);
  close(peer);
  close(acc.fd);
}

static void test_silence_and_cut_answers_time_out(void **state) {
  (void)state;
  sl_secret s;
  secret_of("correct horse battery staple", &s);
  side acc;
  int peer;
  /* Nothing at all: the acceptor gives up after its timeout. */
  pthread_t t = start_acceptor(&s, 200, &acc, &peer);
  pthread_join(t, NULL);
  assert_int_equal(acc.rc, SL_EIO);
  assert_non_null(strstr(acc.err.message, "no handshake within"));
  sl_error_clear(&acc.err);
  close(peer);
  close(acc.fd);
  /* The magic and half a nonce, then the connection closes. */
  t = start_acceptor(&s, 2000, &acc, &peer);
  assert_int_equal(write(peer, "SLAUTH01abcdefghijklmnop", 24), 24);
  shutdown(peer, SHUT_WR);
  pthread_join(t, NULL);
  assert_int_equal(acc.rc, SL_EIO);
  assert_non_null(
      strstr(acc.err.message, "stopped short (after 24 of 72 bytes)"));
  sl_error_clear(&acc.err);
  close(peer);
  close(acc.fd);
}

/* A connector that reaches something else than a node says so. */
static void test_connector_refuses_a_non_node(void **state) {
  (void)state;
  sl_secret s;
  secret_of("correct horse battery staple", &s);
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  const char *banner = "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n";
  assert_int_equal(write(sv[1], banner, strlen(banner)),
                   (ssize_t)strlen(banner));
  sl_error err = {0};
  assert_int_equal(sl_auth_connect(sv[0], &s, 2000, &err), SL_EPERM);
  assert_non_null(strstr(err.message, "not a Sluice node"));
  sl_error_clear(&err);
  close(sv[0]);
  close(sv[1]);
}

static void test_secret_file_rules(void **state) {
  (void)state;
  char path[] = "/tmp/sluice_secret_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "0123456789abcdef\n", 17), 17);
  close(fd);
  sl_secret a, b;
  sl_error err = {0};
  assert_int_equal(sl_secret_load(path, &a, &err), SL_OK);
  /* A trailing newline is not part of the secret. */
  secret_of("0123456789abcdef", &b);
  assert_memory_equal(a.key, b.key, sizeof a.key);
  secret_of("0123456789abcdeF", &b);
  assert_memory_not_equal(a.key, b.key, sizeof a.key);
  /* Readable by others: refused, with the fix. */
  assert_int_equal(chmod(path, 0644), 0);
  assert_int_equal(sl_secret_load(path, &a, &err), SL_EINVAL);
  assert_non_null(strstr(err.message, "chmod 600"));
  sl_error_clear(&err);
  /* Too short. */
  assert_int_equal(chmod(path, 0600), 0);
  fd = open(path, O_WRONLY | O_TRUNC);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "short\n", 6), 6);
  close(fd);
  assert_int_equal(sl_secret_load(path, &a, &err), SL_EINVAL);
  assert_non_null(strstr(err.message, "holds 5 bytes"));
  sl_error_clear(&err);
  /* Long enough, and easy to guess (auth.h: 48 bits by the frequencies of
   * its bytes): 16 bytes of one letter (0 bits), a word twice (44 bits),
   * 'abab...' (32 bits); a 16-letter alphabet (64 bits) passes. */
  const char *weak[] = {"aaaaaaaaaaaaaaaa\n", "passwordpassword\n",
                        "abababababababababababababababab\n"};
  for (int i = 0; i < 3; i++) {
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, weak[i], strlen(weak[i])),
                     (ssize_t)strlen(weak[i]));
    close(fd);
    assert_int_equal(sl_secret_load(path, &a, &err), SL_EINVAL);
    assert_non_null(strstr(err.message, "too easy to guess"));
    assert_non_null(strstr(err.message, "head -c 32 /dev/urandom | base64"));
    sl_error_clear(&err);
  }
  unlink(path);
  /* Missing. */
  assert_int_equal(sl_secret_load(path, &a, &err), SL_EINVAL);
  assert_non_null(strstr(err.message, "cannot open"));
  sl_error_clear(&err);
}

/* After the handshake, a frame longer than any peer sends (4 GiB - 16)
 * makes the node drop the connection at once, without reading or
 * allocating it. */
typedef struct serving {
  int fd;
  int rc;
} serving;

static void *serve_main(void *arg) {
  serving *sv = arg;
  sv->rc = sl_node_serve(sv->fd, NULL);
  return NULL;
}

static void test_node_drops_an_oversized_frame(void **state) {
  (void)state;
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  serving node = {sv[0], 0};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, serve_main, &node), 0);
  sl_strbuf p = SL_STRBUF_INIT;
  uint32_t type = 0;
  sl_error err = {0};
  assert_int_equal(sl_frame_recv(sv[1], &type, &p, 10000, &err), SL_OK);
  assert_int_equal(type, SL_FRAME_HELLO);
  uint32_t head[2] = {SL_FRAME_EXEC, 0xfffffff0u};
  assert_int_equal(write(sv[1], head, sizeof head), (ssize_t)sizeof head);
  pthread_join(t, NULL); /* sl_node_serve closes its end */
  assert_int_equal(node.rc, SL_EINVAL);
  char c;
  assert_int_equal(read(sv[1], &c, 1), 0);
  sl_strbuf_free(&p);
  close(sv[1]);
}

/* A tcp channel between nodes opens only when both ends prove one secret:
 * with the same secret a slot passes; with another, both ends fail and
 * say why. */
typedef struct end_args {
  sl_channel_endpoint ep;
  sl_channel_config cfg;
  sl_channel *ch;
  int rc;
  sl_error err;
} end_args;

static void *open_end_main(void *arg) {
  end_args *e = arg;
  e->rc = sl_channel_open_end(&e->ep, &e->cfg, &e->ch, &e->err);
  return NULL;
}

static void test_tcp_channel_proves_the_secret(void **state) {
  (void)state;
  sl_secret a, b;
  secret_of("correct horse battery staple", &a);
  secret_of("correct horse battery stapler", &b);
  for (int wrong = 0; wrong < 2; wrong++) {
    int lfd;
    char bound[128];
    sl_error err = {0};
    assert_int_equal(sl_channel_listen("tcp", "127.0.0.1:0", &lfd, bound,
                                       sizeof bound, &err),
                     SL_OK);
    end_args con = {{"tcp", SL_CHANNEL_CONSUMER, SL_CHANNEL_VIA_ACCEPT, lfd,
                     NULL, 5000000000LL, &a, NULL},
                    {4, 4096},
                    NULL,
                    0,
                    {0}};
    end_args pro = {{"tcp", SL_CHANNEL_PRODUCER, SL_CHANNEL_VIA_CONNECT, -1,
                     bound, 5000000000LL, wrong ? &b : &a, NULL},
                    {4, 4096},
                    NULL,
                    0,
                    {0}};
    pthread_t tc, tp;
    assert_int_equal(pthread_create(&tc, NULL, open_end_main, &con), 0);
    assert_int_equal(pthread_create(&tp, NULL, open_end_main, &pro), 0);
    pthread_join(tc, NULL);
    pthread_join(tp, NULL);
    close(lfd);
    if (!wrong) {
      assert_int_equal(con.rc, SL_OK);
      assert_int_equal(pro.rc, SL_OK);
      void *slot = sl_channel_acquire(pro.ch);
      assert_non_null(slot);
      memcpy(slot, "proved", 7);
      assert_int_equal(sl_channel_publish(pro.ch, 7, NULL), SL_OK);
      assert_int_equal(sl_channel_wait_slot(con.ch, 5000000000LL), SL_OK);
      const sl_channel_slot *got = sl_channel_poll(con.ch);
      assert_non_null(got);
      assert_string_equal((const char *)got->payload, "proved");
      sl_channel_release(con.ch);
      sl_channel_close(pro.ch);
      sl_channel_destroy(pro.ch);
      sl_channel_destroy(con.ch);
    } else {
      assert_int_equal(con.rc, SL_EPERM);
      assert_non_null(strstr(con.err.message, "tcp channel with"));
      assert_non_null(strstr(con.err.message, "did not prove"));
      assert_int_equal(pro.rc, SL_EPERM);
      assert_non_null(strstr(pro.err.message, "refused"));
      sl_error_clear(&con.err);
      sl_error_clear(&pro.err);
    }
  }
}

/* Connect to bound ("host:port") and return the socket. */
static int connect_plain(const char *bound) {
  int fd = -1;
  sl_error err = {0};
  assert_int_equal(sl_channel_connect_stream(bound, 5000, &fd, &err), SL_OK);
  return fd;
}

/* stderr into a temporary file (the log a daemon writes), and back. */
static int log_to_file(FILE **file) {
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  *file = tmpfile();
  assert_non_null(*file);
  assert_int_equal(dup2(fileno(*file), STDERR_FILENO), STDERR_FILENO);
  return saved;
}

static void log_back(int saved, FILE *file, char *buf, size_t n) {
  fflush(stderr);
  assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
  close(saved);
  rewind(file);
  size_t k = fread(buf, 1, n - 1, file);
  buf[k] = '\0';
  fclose(file);
}

/* Stray connections to a channel's listener (one silent, one sending
 * garbage, one proving another secret) are refused one by one, each
 * logged with its address, and the real peer, connecting after them,
 * still opens the channel. */
static void test_tcp_channel_survives_stray_connections(void **state) {
  (void)state;
  FILE *log;
  int saved = log_to_file(&log);
  sl_secret a, b;
  secret_of("correct horse battery staple", &a);
  secret_of("correct horse battery stapler", &b);
  int lfd;
  char bound[128];
  sl_error err = {0};
  assert_int_equal(
      sl_channel_listen("tcp", "127.0.0.1:0", &lfd, bound, sizeof bound, &err),
      SL_OK);
  end_args con = {{"tcp", SL_CHANNEL_CONSUMER, SL_CHANNEL_VIA_ACCEPT, lfd, NULL,
                   20000000000LL, &a, NULL},
                  {4, 4096},
                  NULL,
                  0,
                  {0}};
  pthread_t tc;
  assert_int_equal(pthread_create(&tc, NULL, open_end_main, &con), 0);
  int silent = connect_plain(bound);
  int garbage = connect_plain(bound);
  static const char junk[64] = "GET / HTTP/1.0\r\n\r\n";
  assert_int_equal(write(garbage, junk, sizeof junk), (ssize_t)sizeof junk);
  end_args stranger = {{"tcp", SL_CHANNEL_PRODUCER, SL_CHANNEL_VIA_CONNECT, -1,
                        bound, 5000000000LL, &b, NULL},
                       {4, 4096},
                       NULL,
                       0,
                       {0}};
  open_end_main(&stranger);
  assert_int_equal(stranger.rc, SL_EPERM);
  sl_error_clear(&stranger.err);
  end_args pro = {{"tcp", SL_CHANNEL_PRODUCER, SL_CHANNEL_VIA_CONNECT, -1,
                   bound, 20000000000LL, &a, NULL},
                  {4, 4096},
                  NULL,
                  0,
                  {0}};
  open_end_main(&pro);
  pthread_join(tc, NULL);
  close(lfd);
  char said[4096];
  log_back(saved, log, said, sizeof said);
  if (con.rc != SL_OK)
    fail_msg("%s", con.err.message);
  /* the garbage and the stranger, by address */
  const char *at = strstr(said, "refused a channel connection from 127.0.0.1:");
  if (!at || !strstr(at + 1, "refused a channel connection from 127.0.0.1:"))
    fail_msg("the refusals do not name their peers:\n%s", said);
  assert_int_equal(pro.rc, SL_OK);
  void *slot = sl_channel_acquire(pro.ch);
  assert_non_null(slot);
  memcpy(slot, "through", 8);
  assert_int_equal(sl_channel_publish(pro.ch, 8, NULL), SL_OK);
  assert_int_equal(sl_channel_wait_slot(con.ch, 5000000000LL), SL_OK);
  const sl_channel_slot *got = sl_channel_poll(con.ch);
  assert_non_null(got);
  assert_string_equal((const char *)got->payload, "through");
  sl_channel_release(con.ch);
  sl_channel_close(pro.ch);
  sl_channel_destroy(pro.ch);
  sl_channel_destroy(con.ch);
  /* The silent one was shut down once the channel opened (after the
   * challenge it was sent, its end of the stream comes). */
  struct timeval tv = {20, 0};
  setsockopt(silent, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[256];
  ssize_t k;
  while ((k = read(silent, buf, sizeof buf)) > 0)
    ;
  assert_true(k == 0 || errno != EAGAIN);
  close(silent);
  close(garbage);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_secret_passes),
      cmocka_unit_test(test_wrong_secret_refused_both_ways),
      cmocka_unit_test(test_replayed_answer_refused),
      cmocka_unit_test(test_garbage_refused),
      cmocka_unit_test(test_silence_and_cut_answers_time_out),
      cmocka_unit_test(test_connector_refuses_a_non_node),
      cmocka_unit_test(test_secret_file_rules),
      cmocka_unit_test(test_node_drops_an_oversized_frame),
      cmocka_unit_test(test_tcp_channel_proves_the_secret),
      cmocka_unit_test(test_tcp_channel_survives_stray_connections),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
