/** A new key's secret, shown this once: focused and selected, with Copy (or, without clipboard access, selected for Ctrl+C). */
import { useRef, useState } from 'preact/hooks';
import type { Created } from './create-key.tsx';

export function NewSecret({ created, onDone }: { created: Created; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string | null>(null);

  async function copy() {
    try {
      await navigator.clipboard.writeText(created.apiKey);
      setCopied('Copied to the clipboard.');
    } catch {
      // No clipboard access (an insecure origin, a denied permission): select it for Ctrl+C.
      field.current?.focus();
      field.current?.select();
      setCopied('Selected: press Ctrl+C (⌘C) to copy it.');
    }
  }

  return (
    <section class="secret" aria-labelledby="secret-heading">
      <h2 id="secret-heading">Key “{created.name}” created</h2>
      <p>Copy it now and keep it somewhere safe: it will not be shown again.</p>
      <label for="new-key">New API key</label>
      <div class="copy-row">
        <input
          id="new-key"
          ref={(el) => {
            // Focus the secret once, so a keyboard user lands where the next step is.
            if (el && field.current !== el) {
              field.current = el;
              el.focus();
            }
          }}
          class="mono"
          type="text"
          readOnly
          value={created.apiKey}
          spellcheck={false}
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      <p class="muted" role="status">
        {copied ?? ''}
      </p>
      <button type="button" class="link-button" onClick={onDone}>
        I have copied it, hide it
      </button>
    </section>
  );
}
