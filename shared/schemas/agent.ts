/** The built-in agent: its chat (events or one JSON answer) and the conversations it keeps. */
import { Type } from '@sinclair/typebox';
import { AnyName, ClosedObject, ErrorBody, IdOf, Nullable, StringEnum, Timestamp } from './common.ts';

export const AGENT_MESSAGE_MAX = 4000;

/**
 * The most `context` may weigh as JSON. The per-field limits alone would allow megabytes; this
 * keeps one selection within a share of the model's context. Here, beside the schema, so the
 * server's check and the add-on's trimming read the same number.
 */
export const AGENT_CONTEXT_MAX_CHARS = 50_000;

/**
 * Sheet cells the add-on passes along with a question ("which of these are still active?"). They
 * reach the model as data, inside the user's turn, never as instructions. Bounded so one
 * selection cannot take the model's whole context: 50 columns, 200 rows, 500 characters a cell,
 * and at most AGENT_CONTEXT_MAX_CHARS as JSON.
 */
export const AgentContext = ClosedObject(
  'Spreadsheet cells given as data: a header row and the selected rows.',
  {
    header: Type.Array(Type.String({ maxLength: 200 }), { maxItems: 50, description: 'Column labels.' }),
    rows: Type.Array(Type.Array(Type.String({ maxLength: 500 }), { maxItems: 50 }), {
      maxItems: 200,
      description: 'The selected rows, each cell as text, in header order.',
    }),
  },
  { title: 'AgentContext' },
);

export const AgentChatBody = ClosedObject('A message to the agent.', {
  message: Type.String({ minLength: 1, maxLength: AGENT_MESSAGE_MAX, description: 'What the user asks.' }),
  conversationId: Type.Optional(IdOf('Continue this conversation; without it a new one starts.')),
  maxCredits: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'At most this many credits for the tools this message calls (up to 1,000,000,000); once spent, paid tools are refused to the model.' }),
  ),
  context: Type.Optional(AgentContext),
});

const CallId = Type.String({ description: 'Pairs a `tool_call` with its `tool_result`.' });
const ToolName = Type.String({ description: 'The tool: an operation id in snake_case, as MCP names it.' });
// Any tool's arguments: every property name is allowed (the pattern), so none is left unsaid.
const ToolInput = Type.Record(AnyName, Type.Unknown(), {
  additionalProperties: false,
  description: 'The arguments the model gave the tool (empty when they were not a JSON object).',
});
const Charged = Type.Integer({ minimum: 0, description: 'Credits this call charged (0 when it failed).' });
const Steps = Type.Integer({ minimum: 0, description: 'Tool calls made for this message.' });

export const AgentText = ClosedObject('A piece of the reply, as the model writes it.', {
  delta: Type.String({ description: 'Text to append to the reply.' }),
});

export const AgentToolCall = ClosedObject('The agent calls a tool.', {
  callId: CallId,
  tool: ToolName,
  input: ToolInput,
  writes: Type.Boolean({
    description:
      'Whether the tool creates or changes something, or spends credits as a POST search does (anything but a read). A write the model asks for after reading a tool result may come from text inside that result: show it to the user.',
  }),
});

/** A job a tool call started: it spends in the background, within its cap. */
const StartedJob = ClosedObject('The job this call started (`start_job`), and the most it may charge.', {
  jobId: IdOf('The job.'),
  maxCredits: Nullable(
    Type.Integer({ minimum: 0 }),
    "The job's cap: never more than what was left of the message's `maxCredits`; null when the message has none and the call set none.",
  ),
});

export const AgentToolResult = ClosedObject('A tool call ended.', {
  callId: CallId,
  tool: ToolName,
  isError: Type.Boolean({ description: 'Whether the call failed (the model was told why).' }),
  creditsCharged: Charged,
  error: Type.Optional(Type.String({ description: 'When it failed: the error code, e.g. `plan_required`, `invalid_request`.' })),
  job: Type.Optional(StartedJob),
});

export const AgentDone = ClosedObject('The last event of a chat answer.', {
  conversationId: IdOf('The conversation, to continue it.'),
  creditsCharged: Type.Integer({ minimum: 0, description: 'Credits the tools of this message charged in all, with what the jobs it started charged while it ran.' }),
  steps: Steps,
});

/** One name per event: the chat's stream declaration. `error` comes before `done` when a step failed midway. */
export const agentChatEvents = {
  text: AgentText,
  tool_call: AgentToolCall,
  tool_result: AgentToolResult,
  error: ErrorBody,
  done: AgentDone,
};

export const AgentChatResult = ClosedObject(
  'The whole answer at once (`Accept: application/json`).',
  {
    conversationId: IdOf('The conversation, to continue it.'),
    reply: Type.String({ description: "The agent's reply." }),
    toolCalls: Type.Array(
      ClosedObject('One tool call of this message.', {
        tool: ToolName,
        input: ToolInput,
        isError: Type.Boolean({ description: 'Whether the call failed.' }),
        creditsCharged: Charged,
        job: Type.Optional(StartedJob),
      }),
      { description: 'The tool calls, in the order they were made.' },
    ),
    creditsCharged: Type.Integer({ minimum: 0, description: 'Credits the tools of this message charged in all, with what the jobs it started charged while it ran.' }),
    // The Error record itself (a copy with its own description would be a second schema named Error).
    error: Type.Optional(ErrorBody),
  },
  { title: 'AgentChatResult' },
);

const conversationFields = {
  conversationId: IdOf('The conversation.'),
  title: Type.String({ description: 'From its first message.' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

export const ConversationSummary = ClosedObject('A conversation, without its messages.', conversationFields, { title: 'ConversationSummary' });

export const ConversationList = ClosedObject('The workspace’s conversations, newest first.', {
  conversations: Type.Array(ConversationSummary, { description: 'At most 100, most recently updated first.' }),
});

export const ConversationMessage = ClosedObject(
  'One message of a conversation.',
  {
    role: StringEnum(['user', 'assistant', 'tool'] as const, { description: 'Who said it: the user, the agent, or a tool (its JSON result).' }),
    content: Type.String({ description: 'The text, or for a tool its JSON result.' }),
    at: Timestamp,
  },
  { title: 'ConversationMessage' },
);

export const Conversation = ClosedObject(
  'A conversation with its messages.',
  { ...conversationFields, messages: Type.Array(ConversationMessage, { description: 'Oldest first.' }) },
  { title: 'Conversation' },
);

export const ConversationParams = Type.Object({ conversationId: IdOf('The conversation.') }, { additionalProperties: false });
