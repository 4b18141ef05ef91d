/** The workspace's past conversations, newest first, each opened with a button; and "New conversation". */
import type { Out } from '../../api.ts';
import { Loading } from '../../components/problem.tsx';
import { formatTime } from '../../format.ts';
import type { Loaded } from '../../load.ts';

type Conversation = Out<'listConversations'>['conversations'][number];

export function ConversationList({ conversations, current, busy, onOpen }: { conversations: Loaded<Out<'listConversations'>>; current: string | null; busy: boolean; onOpen: (id: string | null) => void }) {
  return (
    <section class="conversations" aria-labelledby="conversations-heading">
      <h2 id="conversations-heading">Conversations</h2>
      <button type="button" onClick={() => onOpen(null)} disabled={busy}>
        New conversation
      </button>
      <Loading state={conversations} label="the conversations">
        {({ conversations: list }) =>
          list.length === 0 ? (
            <p class="muted">None yet.</p>
          ) : (
            <ul>
              {list.map((c) => (
                <li key={c.conversationId}>
                  <ConversationButton conversation={c} current={c.conversationId === current} busy={busy} onOpen={() => onOpen(c.conversationId)} />
                </li>
              ))}
            </ul>
          )
        }
      </Loading>
    </section>
  );
}

function ConversationButton({ conversation: c, current, busy, onOpen }: { conversation: Conversation; current: boolean; busy: boolean; onOpen: () => void }) {
  return (
    <button type="button" class="conversation" aria-current={current ? 'true' : undefined} disabled={busy} onClick={onOpen}>
      <span class="title">{c.title}</span>
      <span class="muted small">{formatTime(c.updatedAt)}</span>
    </button>
  );
}
