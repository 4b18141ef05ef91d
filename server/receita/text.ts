/** Words of free text for matching, over the shared folding (shared/fold-text.ts). */
import { foldText } from '../../shared/fold-text.ts';

/** Words too common to narrow a name search; a query made only of them matches on none. */
const STOPWORDS = new Set(['de', 'da', 'do', 'das', 'dos', 'e', 'em', 'a', 'o', 'the', 'of', 'and']);

/** The distinct searchable words of a text, in order of first appearance. */
export function words(text: string | null | undefined): string[] {
  if (!text) return [];
  const out = new Set<string>();
  for (const word of foldText(text).split(' ')) {
    if (word.length > 1 && !STOPWORDS.has(word)) out.add(word);
  }
  return [...out];
}
