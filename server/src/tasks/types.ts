/** What the task routes get from the dispatcher (tasks/index.ts). */
export interface TaskKit {
  /** The raw request body (the relay's body limit applies). */
  readBody(): Promise<Buffer>;
  /** The client's address (TRUST_PROXY applied). */
  ip: string;
  /** The poll period (ms; 0 when the poller is off). */
  pollMs: number;
}
