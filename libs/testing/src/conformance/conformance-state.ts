import type { Server } from '@modelcontextprotocol/server';

/** What one connection owns: its subscriptions and the watched resource's current text. */
export interface SessionState {
  readonly server: Server;
  readonly subscriptions: Set<string>;
  watchedText: string;
}
