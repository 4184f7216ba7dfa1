import type { EventId, EventStore, JSONRPCMessage, StreamId } from '@modelcontextprotocol/server';

/**
 * An in-memory EventStore, so a Streamable HTTP session can resume a closed SSE
 * stream: the transport stores every message it sends on a stream (and a
 * priming event at its start), and a client that reconnects with Last-Event-ID
 * gets what it missed. Event ids are `<streamId>_<sequence>`; a stream keeps at
 * most `maxEventsPerStream` events.
 */
export class InMemoryEventStore implements EventStore {
  private readonly streams = new Map<StreamId, { sequence: number; events: Array<{ id: EventId; message: JSONRPCMessage }> }>();

  constructor(private readonly maxEventsPerStream = 1000) {}

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    let stream = this.streams.get(streamId);
    if (!stream) {
      stream = { sequence: 0, events: [] };
      this.streams.set(streamId, stream);
    }
    const id = `${streamId}_${++stream.sequence}`;
    stream.events.push({ id, message });
    if (stream.events.length > this.maxEventsPerStream) stream.events.shift();
    return id;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    const streamId = streamOf(eventId);
    return streamId !== undefined && this.streams.has(streamId) ? streamId : undefined;
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const streamId = streamOf(lastEventId);
    const stream = streamId === undefined ? undefined : this.streams.get(streamId);
    if (streamId === undefined || !stream) throw new Error(`Unknown event id ${lastEventId}`);
    const after = stream.events.findIndex((event) => event.id === lastEventId);
    for (const event of stream.events.slice(after + 1)) {
      // Priming events are stored as {}: they mark a position, they carry nothing to replay.
      if (Object.keys(event.message).length > 0) await send(event.id, event.message);
    }
    return streamId;
  }
}

function streamOf(eventId: EventId): StreamId | undefined {
  const cut = eventId.lastIndexOf('_');
  return cut > 0 ? eventId.slice(0, cut) : undefined;
}
