// The CLI's I/O types: what the entry point injects and what every subcommand receives. Their own
// module, so subcommands loaded on demand never import the entry point back.

/** Where the CLI writes; injected so tests run the real CLI in-process. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Reads standard input, rejecting as soon as more than `maxBytes` bytes arrive. */
  readonly readStdin: (maxBytes?: number) => Promise<string>;
  readonly stdoutIsTty: boolean;
  readonly stderrIsTty: boolean;
  /** The terminal's width when stdout is one (the table wraps to it unless `COLUMNS` is set). */
  readonly stdoutColumns?: number;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly now: () => Date;
  /** Base for relative file references in reports (SARIF); defaults to the process' directory. */
  readonly cwd?: string;
}

/** What a subcommand gets: the io and a way to set the process exit code. */
export interface CommandContext {
  readonly io: CliIo;
  readonly setExitCode: (code: number) => void;
}
