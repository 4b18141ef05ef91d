/**
 * Agent: the chat, streamed (text as it arrives, each tool call with what it was given and what
 * it cost), the list of past conversations, and continuing one with its conversationId. Its parts
 * are in agent/.
 */
import { useRef } from 'preact/hooks';
import { call } from '../api.ts';
import { Problem } from '../components/problem.tsx';
import { useLoad } from '../load.ts';
import { Composer } from './agent/composer.tsx';
import { ConversationList } from './agent/conversation-list.tsx';
import { Transcript } from './agent/transcript.tsx';
import { useChat } from './agent/use-chat.ts';

export function Agent() {
  const conversations = useLoad(() => call('listConversations'), []);
  // Said before anything is typed: without a model the agent cannot answer (issue 43).
  const catalog = useLoad(() => call('listProviders'), []);
  const model = catalog.state.status === 'ok' ? catalog.state.data.languageModel : null;
  const input = useRef<HTMLTextAreaElement>(null);
  const chat = useChat(input, conversations.reload);

  return (
    <>
      <h1 tabIndex={-1}>Agent</h1>
      <div class="agent">
        <ConversationList conversations={conversations.state} current={chat.conversationId} busy={chat.busy} onOpen={(id) => void chat.open(id)} />
        <section class="chat" aria-labelledby="chat-heading">
          <h2 id="chat-heading">{chat.conversationId ? 'Conversation' : 'New conversation'}</h2>
          {model && !model.configured && (
            <p class="notice" role="status">
              <strong>No language model is configured on this server</strong>, so the agent cannot answer. The operator sets{' '}
              <code>{model.variable}</code> (an OpenAI-compatible endpoint) to enable it; campaigns still get messages from the built-in writer.
            </p>
          )}
          {chat.opening !== null && <Problem error={chat.opening} />}
          <Transcript turns={chat.turns} busy={chat.busy} />
          <Composer input={input} busy={chat.busy} noModel={model !== null && !model.configured} onSend={(text) => void chat.send(text)} />
        </section>
      </div>
    </>
  );
}
