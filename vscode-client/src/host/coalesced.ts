/**
 * A task run at once when asked (no delay), with the asks that come while it runs folded into one
 * more run after it: a burst of N asks costs at most two runs, and the last ask is always served
 * by a run that started after it.
 */
export class Coalesced {
  private running = false;
  private again = false;
  private readonly waiters: (() => void)[] = [];

  constructor(
    private readonly task: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Run the task now, or once more after the run in flight. */
  ask(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.task()
      .catch(this.onError)
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          this.ask();
        } else for (const resolve of this.waiters.splice(0)) resolve();
      });
  }

  /** Resolves once no run is in flight or owed. */
  settled(): Promise<void> {
    return this.running ? new Promise((resolve) => this.waiters.push(resolve)) : Promise.resolve();
  }
}
