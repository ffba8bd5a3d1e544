// How long-running benchmark steps report progress; the CLI draws it as terminal bars.

export interface ProgressTask {
  tick(count?: number): void;
  done(): void;
}

export interface Progress {
  start(label: string, total: number): ProgressTask;
  /** A one-line note between steps. */
  note(line: string): void;
}
