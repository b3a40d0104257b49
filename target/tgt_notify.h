/* systemd's readiness protocol (sd_notify(3)) without libsystemd: one datagram of
 * "KEY=VALUE\n..." to the AF_UNIX socket named by $NOTIFY_SOCKET ('@' = abstract namespace).
 * utgtd sends READY=1 once it serves and STOPPING=1 when it begins to shut down. */
#ifndef UTGT_TGT_NOTIFY_H
#define UTGT_TGT_NOTIFY_H

/* Returns 1 sent, 0 no $NOTIFY_SOCKET (not under systemd's Type=notify), -1 error (errno). */
int tgt_notify(const char *state);

#endif
