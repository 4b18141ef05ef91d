/** The message box: Enter sends, Shift+Enter starts a new line; nothing is sent while an answer comes or without a model. */
import type { RefObject } from 'preact';
import { useState } from 'preact/hooks';

const MAX_MESSAGE = 4000;

export function Composer({ input, busy, noModel, onSend }: { input: RefObject<HTMLTextAreaElement | null>; busy: boolean; noModel: boolean; onSend: (text: string) => void }) {
  const [message, setMessage] = useState('');

  function send(event?: Event) {
    event?.preventDefault();
    const text = message.trim();
    if (!text || busy) return;
    setMessage('');
    onSend(text);
  }

  return (
    <form class="composer" onSubmit={send}>
      <label for="agent-message">Message</label>
      <textarea
        id="agent-message"
        ref={input}
        rows={3}
        maxLength={MAX_MESSAGE}
        disabled={noModel}
        value={message}
        aria-describedby="agent-hint"
        onInput={(e) => setMessage(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) send(e);
        }}
      />
      <p id="agent-hint" class="muted small">
        Enter sends; Shift+Enter starts a new line.
      </p>
      <button type="submit" class="primary" disabled={busy || noModel || !message.trim()}>
        {busy ? 'Answering…' : 'Send'}
      </button>
    </form>
  );
}
