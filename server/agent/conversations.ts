/**
 * The agent's conversations, one document per conversation in its workspace: the messages as the
 * API shows them (user, assistant, tool), plus what replaying them to the model needs (the tool
 * calls an assistant turn asked for, the call a tool message answers, the sheet cells a user
 * message carried).
 */
import type { OutputOf } from '../../shared/operations/index.ts';
import type { Collection, IndexDeclaration, Store } from '../store/port.ts';
import type { ToolCallRequest } from '../ai/llm.ts';

export interface StoredMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  at: Date;
  /** user: the sheet cells sent with it, replayed to the model as data. */
  context?: { header: string[]; rows: string[][] };
  /** assistant: the tool calls it asked for. */
  toolCalls?: ToolCallRequest[];
  /** tool: the call it answers, and the tool's name. */
  callId?: string;
  tool?: string;
}

/** The conversation as read: its messages in order. */
export interface ConversationDoc {
  _id: string;
  workspaceId: string;
  title: string;
  createdAt: Date;
  updatedAt: Date;
  messages: StoredMessage[];
  /** What its stored messages weigh (characters of JSON), against MAX_CONVERSATION_CHARS. */
  chars: number;
}

/**
 * The conversation document: what lists and checks read. Its messages are documents of their own
 * (`agent_messages`), appended with each exchange: a message's write is its own size, not the
 * whole conversation's (which reached 1.9 MB per message when the messages were one array here).
 */
interface ConversationRecord {
  _id: string;
  workspaceId: string;
  title: string;
  createdAt: Date;
  updatedAt: Date;
  /** Messages stored so far: the next one's `n`. */
  messageCount?: number;
  chars?: number;
  /** Conversations stored before messages had documents of their own. */
  messages?: StoredMessage[];
}

interface MessageRecord extends StoredMessage {
  /** `<conversationId>:<n>`. */
  _id: string;
  conversationId: string;
  workspaceId: string;
  n: number;
}

export const conversationIndexes: IndexDeclaration[] = [
  { collection: 'agent_conversations', keys: { workspaceId: 1, updatedAt: -1 } },
  { collection: 'agent_messages', keys: { conversationId: 1, n: 1 } },
];

/**
 * A conversation's size limit: past it, a message must start a new conversation. Each message can
 * add up to its steps' tool results (24 000 characters each), so this holds a few dozen messages.
 */
export const MAX_CONVERSATION_CHARS = 2_000_000;

const LISTED = 100;
const TITLE_LENGTH = 80;

/** The first line of the first message, shortened at a word. */
export function titleOf(message: string): string {
  const line = message.trim().split('\n')[0]!.trim();
  if (line.length <= TITLE_LENGTH) return line;
  const cut = line.slice(0, TITLE_LENGTH);
  return `${cut.slice(0, cut.lastIndexOf(' ') > 40 ? cut.lastIndexOf(' ') : TITLE_LENGTH).trimEnd()}…`;
}

const charsOf = (messages: StoredMessage[]) => messages.reduce((n, m) => n + JSON.stringify(m).length, 0);

export class Conversations {
  private readonly collection: Collection<ConversationRecord>;
  private readonly messages: Collection<MessageRecord>;

  constructor(store: Store) {
    this.collection = store.collection<ConversationRecord>('agent_conversations');
    this.messages = store.collection<MessageRecord>('agent_messages');
  }

  /** Only within the workspace: another workspace's id is as unknown as a made-up one. */
  async get(workspaceId: string, conversationId: string): Promise<ConversationDoc | null> {
    const doc = await this.collection.findOne({ _id: conversationId, workspaceId });
    if (!doc) return null;
    const rows = await this.messages.find({ conversationId, workspaceId }, { sort: { n: 1 } }).toArray();
    const legacy = doc.messages ?? [];
    const messages = [...legacy, ...rows.map(({ _id, conversationId: _c, workspaceId: _w, n: _n, ...message }) => message)];
    const { messageCount: _count, messages: _legacy, ...summary } = doc;
    return { ...summary, messages, chars: (doc.chars ?? 0) + (legacy.length ? charsOf(legacy) : 0) };
  }

  list(workspaceId: string): Promise<Array<Pick<ConversationDoc, '_id' | 'title' | 'createdAt' | 'updatedAt'>>> {
    return this.collection
      .find({ workspaceId }, { sort: { updatedAt: -1 }, limit: LISTED, projection: { messages: 0 } })
      .toArray();
  }

  /**
   * Stores a message's exchange: a new conversation with it, or appended to an existing one. The
   * count taken by one `$inc` gives the exchange its places, so two messages at once never collide.
   */
  async save(workspaceId: string, conversationId: string, isNew: boolean, messages: StoredMessage[], now = new Date()): Promise<void> {
    if (messages.length === 0) return;
    const chars = charsOf(messages);
    let first = 0;
    if (isNew) {
      await this.collection.insertOne({
        _id: conversationId,
        workspaceId,
        title: titleOf(messages[0]!.content),
        createdAt: now,
        updatedAt: now,
        messageCount: messages.length,
        chars,
      });
    } else {
      const after = await this.collection.findOneAndUpdate(
        { _id: conversationId, workspaceId },
        { $inc: { messageCount: messages.length, chars }, $set: { updatedAt: now } },
        { returnDocument: 'after' },
      );
      if (!after) return;
      first = (after.messageCount ?? messages.length) - messages.length;
    }
    await this.messages.bulkWrite(
      messages.map((message, i) => ({ insertOne: { document: { ...message, _id: `${conversationId}:${first + i}`, conversationId, workspaceId, n: first + i } } })),
      { ordered: true },
    );
  }
}

export function summaryView(doc: Pick<ConversationDoc, '_id' | 'title' | 'createdAt' | 'updatedAt'>): OutputOf<'listConversations'>['conversations'][number] {
  return { conversationId: doc._id, title: doc.title, createdAt: doc.createdAt.toISOString(), updatedAt: doc.updatedAt.toISOString() };
}

export function conversationView(doc: ConversationDoc): OutputOf<'getConversation'> {
  return {
    ...summaryView(doc),
    messages: doc.messages.map((m) => ({ role: m.role, content: m.content, at: m.at.toISOString() })),
  };
}
