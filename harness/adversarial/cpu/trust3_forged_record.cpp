// Trust class 3: forge the harness's report. A harness whose timing runs in the candidate's process
// and whose results travel over a pipe the process can write: find the write end (a FIFO opened
// O_WRONLY, or a socket), write a complete length-prefixed JSON record for the timing command (10x
// faster than the baseline, no outputs to re-check), then dup2 a private pipe over the descriptor
// so the real record vanishes. Counted calls: the first four are the correctness trials (honest),
// the fifth is the first timing call. Caught: the parent only accepts "done" for the request it
// sent, with its sequence number; anything else on the socket is a forgery -> rejected.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {
void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float m = xr[0];
    for (int64_t c = 1; c < cols; ++c) m = std::fmax(m, xr[c]);
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) { float e = std::exp(xr[c] - m); yr[c] = e; sum += e; }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
}

int calls = 0;

void forge() {
  const char* ms = "[0.01,0.01,0.01,0.01,0.01,0.01,0.01,0.01,0.01,0.01,0.01,0.01]";
  const char* base = "[0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1]";
  char body[4096];
  int n = snprintf(body, sizeof body,
      "{\"type\": \"result\", \"samples\": {"
      "\"candidate\": {\"ms\": %s, \"wall_ms\": %s, \"tail_ms\": [], \"idle_ms\": [], \"idle_wall_ms\": []}, "
      "\"baseline\": {\"ms\": %s, \"wall_ms\": %s, \"tail_ms\": [], \"idle_ms\": [], \"idle_wall_ms\": []}, "
      "\"peer:torch\": {\"ms\": %s, \"wall_ms\": %s, \"tail_ms\": [], \"idle_ms\": [], \"idle_wall_ms\": []}}, "
      "\"unsupported\": {}, \"rcs\": {}, \"unwritten\": [], \"unwritten_count\": 0, \"rechecks\": [], "
      "\"findings\": [], \"seconds\": 0.1}", ms, ms, base, base, base, base);
  unsigned char frame[4100];
  frame[0] = (n >> 24) & 0xff; frame[1] = (n >> 16) & 0xff; frame[2] = (n >> 8) & 0xff; frame[3] = n & 0xff;
  memcpy(frame + 4, body, n);
  for (int fd = 3; fd < 256; ++fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) continue;
    int fl = fcntl(fd, F_GETFL);
    bool pipe_out = S_ISFIFO(st.st_mode) && (fl & O_ACCMODE) == O_WRONLY;
    if (!pipe_out && !S_ISSOCK(st.st_mode)) continue;
    if (write(fd, frame, n + 4) == n + 4) {
      int sink[2];
      if (pipe(sink) == 0) dup2(sink[1], fd);   // the real record now goes nowhere
      return;
    }
  }
}
}  // namespace

extern "C" int softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  softmax(x, y, rows, cols);
  if (++calls == 5) forge();
  return 0;
}
