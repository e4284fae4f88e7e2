#pragma once
// tui::App: the terminal UI's loop. Reads the ledger only when it changed
// (the ledger's change counter, polled once a second), live GPU state every
// few seconds, and draws a frame only after a key, a change or a new minute.
// Every booking, edit and cancel goes through the client::Ledger, so the
// preview and the result are the service's own admission.

#include <functional>
#include <string>

#include "client/ledger.h"
#include "engine/civil_time.h"
#include "tui/model.h"
#include "tui/render.h"
#include "tui/terminal.h"

namespace bk::tui {

struct Deps {
  client::Ledger& ledger;
  const engine::Zone& zone;
  std::string deployment;                                 // "private" or "server"
  std::function<Result<std::string>()> usage_text;        // `u`: the caller's usage
  std::function<std::string()> monitor_state;             // "running", "stale", ...
  std::function<std::string()> worker_state;              // "idle", "running", ...
  std::function<std::vector<std::string>()> admin_lines;  // who administers this
};

class App {
 public:
  App(Deps deps, Terminal& terminal, Glyphs glyphs);
  // Runs until the user quits or a signal ends it; 0.
  int Run();

  // One step of the loop, exposed so that a test can drive it: reads what
  // changed, handles `event`, and draws when something did.
  void Step(const Event& event);
  bool done() const { return done_; }
  const View& view() const { return view_; }
  const Data& data() const { return data_; }

 private:
  void Poll();
  void Reload();
  void RefreshLive();
  bool Telemetry() const;  // some GPU has a live source (NVML, a simulation)
  void Draw();
  void Say(std::string text, bool error = false);

  void HandleKey(int key);
  void HandleMainKey(int key);
  void HandleEditorKey(int key);
  void HandleDialogKey(int key);
  void HandlePromptKey(int key);
  void HandleClick(int x, int y);
  void SubmitPrompt();

  void OpenAdd();
  void OpenEdit();
  void AskCancel();
  void DoCancel(const std::string& id);
  void ShowDetails();
  void ShowHelp();
  void ShowUsage();
  void Preview();
  void Submit();
  void KeepCursorVisible();

  // The reservation the keys act on: the selected panel row, or the one
  // under the cursor; -1 when none.
  int Target() const;

  Deps deps_;
  Terminal& terminal_;
  Glyphs glyphs_;
  Data data_;
  View view_;
  std::vector<int> rows_;
  Layout layout_;
  std::vector<Seconds> levels_;
  uint64_t counter_ = 0;
  bool have_counter_ = false;
  bool unreachable_ = false;  // the last poll failed
  bool loaded_ = false;
  bool dirty_ = true;
  bool done_ = false;
  Seconds last_poll_ = 0, last_live_ = 0, last_states_ = -1000, drawn_minute_ = -1;
  Seconds last_duration_ = 3600;
  Seconds live_every_ = 5;  // seconds between live refreshes (longer when they are slow)
};

}  // namespace bk::tui
