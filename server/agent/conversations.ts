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

export interface ConversationDoc {
  _id: string;
  workspaceId: string;
  title: string;
  createdAt: Date;
  updatedAt: Date;
  messages: StoredMessage[];
}

export const conversationIndexes: IndexDeclaration[] = [{ collection: 'agent_conversations', keys: { workspaceId: 1, updatedAt: -1 } }];

const LISTED = 100;
const TITLE_LENGTH = 80;

/** The first line of the first message, shortened at a word. */
export function titleOf(message: string): string {
  const line = message.trim().split('\n')[0]!.trim();
  if (line.length <= TITLE_LENGTH) return line;
  const cut = line.slice(0, TITLE_LENGTH);
  return `${cut.slice(0, cut.lastIndexOf(' ') > 40 ? cut.lastIndexOf(' ') : TITLE_LENGTH).trimEnd()}…`;
}

export class Conversations {
  private readonly collection: Collection<ConversationDoc>;

  constructor(store: Store) {
    this.collection = store.collection<ConversationDoc>('agent_conversations');
  }

  /** Only within the workspace: another workspace's id is as unknown as a made-up one. */
  get(workspaceId: string, conversationId: string): Promise<ConversationDoc | null> {
    return this.collection.findOne({ _id: conversationId, workspaceId });
  }

  list(workspaceId: string): Promise<ConversationDoc[]> {
    return this.collection
      .find({ workspaceId }, { sort: { updatedAt: -1 }, limit: LISTED, projection: { messages: 0 } })
      .toArray();
  }

  /** Stores a message's exchange: a new conversation with it, or appended to an existing one. */
  async save(workspaceId: string, conversationId: string, isNew: boolean, messages: StoredMessage[], now = new Date()): Promise<void> {
    if (messages.length === 0) return;
    if (isNew) {
      await this.collection.insertOne({
        _id: conversationId,
        workspaceId,
        title: titleOf(messages[0]!.content),
        createdAt: now,
        updatedAt: now,
        messages,
      });
      return;
    }
    await this.collection.updateOne({ _id: conversationId, workspaceId }, { $push: { messages: { $each: messages } }, $set: { updatedAt: now } });
  }
}

export function summaryView(doc: ConversationDoc): OutputOf<'listConversations'>['conversations'][number] {
  return { conversationId: doc._id, title: doc.title, createdAt: doc.createdAt.toISOString(), updatedAt: doc.updatedAt.toISOString() };
}

export function conversationView(doc: ConversationDoc): OutputOf<'getConversation'> {
  return {
    ...summaryView(doc),
    messages: doc.messages.map((m) => ({ role: m.role, content: m.content, at: m.at.toISOString() })),
  };
}
