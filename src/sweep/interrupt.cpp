#include "tilesweep/sweep/interrupt.h"

#include <csignal>

namespace ts::sweep {

namespace {

std::atomic<int> g_signal{0};

extern "C" void on_signal(int s) {
  int none = 0;
  g_signal.compare_exchange_strong(none, s);
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int interrupt_signal() { return g_signal.load(); }

const std::atomic<int>& interrupt_flag() { return g_signal; }

void request_interrupt(int signal) { on_signal(signal); }

}  // namespace ts::sweep
