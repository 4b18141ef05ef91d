/** Words of free text for matching, over the shared folding (shared/fold-text.ts). */
import { foldText } from '../../shared/fold-text.ts';

/** Words too common to narrow a name search; a query made only of them matches on none. */
const STOPWORDS = new Set(['de', 'da', 'do', 'das', 'dos', 'e', 'em', 'a', 'o', 'the', 'of', 'and']);

const NON_ASCII = /[^\x00-\x7f]/;

/** The distinct searchable words of a text, in order of first appearance. */
export function words(text: string | null | undefined): string[] {
  if (!text) return [];
  // Registry names are plain ASCII; their words are the runs of letters and digits, found
  // without the folding's regular expressions (every import folds millions of names).
  if (NON_ASCII.test(text)) return foldedWords(foldText(text));
  const lower = text.toLowerCase();
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 0x20;
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39)) {
      if (start < 0) start = i;
      continue;
    }
    if (start >= 0 && i - start > 1) {
      const word = lower.slice(start, i);
      if (!STOPWORDS.has(word) && !out.includes(word)) out.push(word);
    }
    start = -1;
  }
  return out;
}

function foldedWords(folded: string): string[] {
  const out = new Set<string>();
  for (const word of folded.split(' ')) {
    if (word.length > 1 && !STOPWORDS.has(word)) out.add(word);
  }
  return [...out];
}
