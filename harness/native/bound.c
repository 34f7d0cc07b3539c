/* The executor's side of bound requests (harness/timing/bound.py), in native code: CUDA executors
 * synchronise the device after each call; CPU executors (issue 39) have no synchronisation (NULL).
 *
 * A bound request is the leanest call there is: the parent writes 8 bytes on the executor's socket
 * (the slot, a tag), the executor calls the entry point on that slot's arguments, synchronises the
 * device and writes 16 bytes back; no pad, no events, no CUPTI, no JSON, no Python. The parent
 * times it on its own clock, to the end of its own read of the slot's outputs, in the candidate's
 * executor and in the baseline's, and bounds the candidate's reported figures by the difference.
 * Whatever the candidate's process does instead of this loop (it owns its process and may replace
 * it) can save only what this loop spends beyond a read, a call, a synchronisation and a write: a
 * few microseconds, where the executor's Python request path spends tens.
 *
 * A batch (bound.py's batch mode) is several requests sent at once whose tags but the last's carry
 * KS_BOUND_NOSYNC: those calls are made back to back and the device is synchronised once, after the
 * last, so that the parent's clock over the batch holds the calls' work and one request's costs.
 *
 * Frames, little-endian. Request: int32 slot (negative: end of the session), uint32 tag. Reply:
 * uint32 magic, uint32 tag, int32 the entry point's return code, int32 the synchronisation's result
 * (a CUresult: non-zero when the call faulted). On entry the loop writes one reply with tag 0 and
 * both codes 0, which tells the parent that the session started (a JSON frame there instead is the
 * executor's error).
 *
 * The arguments: as harness/native/batch.c, any entry point of at most 16 integer-class and 8 float
 * arguments through one prototype (x86-64 System V). */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#define KS_BOUND_MAGIC 0x4e42534bu /* "KSBN" */
#define KS_BOUND_NOSYNC 0x80000000u /* in a request's tag: no synchronisation after this call */

typedef int (*entry_t)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       float, float, float, float, float, float, float, float);
typedef int (*sync_t)(void);

static int read_exact(int fd, void *buf, size_t n) {
  char *p = (char *)buf;
  while (n > 0) {
    ssize_t got = read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    p += got;
    n -= (size_t)got;
  }
  return 0;
}

static int write_exact(int fd, const void *buf, size_t n) {
  const char *p = (const char *)buf;
  while (n > 0) {
    ssize_t put = write(fd, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return -1;
    p += put;
    n -= (size_t)put;
  }
  return 0;
}

static int reply(int fd, uint32_t tag, int32_t rc, int32_t sync_rc) {
  uint32_t out[4] = {KS_BOUND_MAGIC, tag, (uint32_t)rc, (uint32_t)sync_rc};
  return write_exact(fd, out, sizeof out);
}

/* Serves bound requests on `fd` until an end frame; slot s's arguments are ints[s*ni ...] and
 * floats[s*nf ...] (the executor's table of the scenario's slots). Returns how many calls it made,
 * -1 when the socket failed, -2 for arguments that do not fit, -3 for a slot out of range. */
int ks_bound_serve(int fd, void *fn, int nslots, int ni, const int64_t *ints, int nf, const float *floats,
                   void *sync) {
  if (ni < 0 || ni > 16 || nf < 0 || nf > 8 || !fn) return -2;
  entry_t f = (entry_t)fn;
  sync_t synchronise = (sync_t)sync;
  if (reply(fd, 0, 0, 0)) return -1;
  int served = 0;
  for (;;) {
    int32_t req[2];
    if (read_exact(fd, req, sizeof req)) return -1;
    int32_t s = req[0];
    if (s < 0) return served;
    if (s >= nslots) return -3;
    int64_t a[16] = {0};
    float x[8] = {0};
    for (int j = 0; j < ni; j++) a[j] = ints[(int64_t)s * ni + j];
    for (int j = 0; j < nf; j++) x[j] = floats[(int64_t)s * nf + j];
    int rc = f(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14],
               a[15], x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]);
    int sync_rc = synchronise && !((uint32_t)req[1] & KS_BOUND_NOSYNC) ? synchronise() : 0;
    served++;
    if (reply(fd, (uint32_t)req[1], rc, sync_rc)) return -1;
  }
}
