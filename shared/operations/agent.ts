import { AgentChatBody, AgentChatResult, agentChatEvents, Conversation, ConversationList, ConversationParams } from '../schemas/agent.ts';
import { defineOperations } from './types.ts';

/**
 * The built-in agent. Its scope is `research:write`, the scope of the operations that use the
 * model, for the chat and for reading its conversations alike: the conversations are the chat's
 * own records. No plan is needed: without one the chat stays available within a daily allowance
 * (decided by payment.ts), and each tool still meets its own plan gate. Not MCP tools (`tool: false`).
 */
export const agentOperations = defineOperations({
  agentChat: {
    method: 'POST',
    path: '/api/agent/chat',
    summary: 'Chat with the agent',
    description:
      "Sends a message to prospecta's agent, which answers using prospecta's own tools (the MCP tools this credential may " +
      'use, DELETE operations excepted), each call charged as if made directly. Chatting itself is free. Answers ' +
      '`text/event-stream`: `text` deltas, `tool_call` and `tool_result` per tool call, and one `done` last (after an ' +
      '`error` event when a step failed midway); with `Accept: application/json`, one JSON answer instead. Without an ' +
      'active plan, a limited number of messages a day.',
    tag: 'Agent',
    scope: 'research:write',
    requiresPlan: false,
    credits: { rule: 'free' },
    request: { body: AgentChatBody },
    responses: { 200: AgentChatResult },
    errors: [400, 401, 402, 404, 429, 500, 503],
    stream: { events: agentChatEvents, json: true, pausable: false },
    tool: false,
    // Free itself, but its tool calls charge: a retried message must not run them again.
    idempotent: true,
  },
  listConversations: {
    method: 'GET',
    path: '/api/agent/conversations',
    summary: 'List agent conversations',
    description: "The workspace's conversations with the agent, most recently updated first.",
    tag: 'Agent',
    scope: 'research:write',
    requiresPlan: false,
    credits: { rule: 'free' },
    request: {},
    responses: { 200: ConversationList },
    errors: [401],
    tool: false,
  },
  getConversation: {
    method: 'GET',
    path: '/api/agent/conversations/{conversationId}',
    summary: 'Get an agent conversation',
    description: 'A conversation with its messages: the user’s, the agent’s, and the tools’ JSON results.',
    tag: 'Agent',
    scope: 'research:write',
    requiresPlan: false,
    credits: { rule: 'free' },
    request: { params: ConversationParams },
    responses: { 200: Conversation },
    errors: [401, 404],
    tool: false,
  },
});
