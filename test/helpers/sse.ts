/** Reading a server-sent-events response the way a client library does (eventsource-parser). */
import { createParser } from 'eventsource-parser';
import { EventSourceParserStream } from 'eventsource-parser/stream';

export interface ReceivedEvent {
  event: string;
  data: unknown;
}

/** Every event of a response, in order, until the server ends the stream. */
export async function readEvents(res: Response): Promise<ReceivedEvent[]> {
  const events: ReceivedEvent[] = [];
  const stream = res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const message of stream) events.push({ event: message.event ?? 'message', data: JSON.parse(message.data) });
  return events;
}

/** The events of a whole `text/event-stream` body already read. */
export function parseEvents(text: string): ReceivedEvent[] {
  const events: ReceivedEvent[] = [];
  const parser = createParser({ onEvent: (message) => events.push({ event: message.event ?? 'message', data: JSON.parse(message.data) }) });
  parser.feed(text);
  return events;
}
