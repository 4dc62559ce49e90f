// The signals that ask a run to stop, rather than kill it: SIGTERM (Slurm's
// scancel and time limit, Kubernetes' preemption, mpirun passing one on),
// SIGINT (Ctrl-C) and SIGUSR1 (the notice `sbatch --signal=USR1@90` sends
// ahead of the time limit). The trainer checks after each step, saves a
// checkpoint and its report, and stops with an error that says how to
// resume. A second signal of the same kind acts as it did before (the
// handler resets itself), so a second Ctrl-C still ends the process at once.
#pragma once

namespace ts::tasks {

class StopSignals {
 public:
  // Installs the handlers; the destructor puts back the ones before.
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The first of the signals received since the handlers were installed;
  // 0 if none. Safe to call from any thread.
  static int received();
};

}  // namespace ts::tasks
