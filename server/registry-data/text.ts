/**
 * Folding of free text for matching: registry names are upper-case and mostly unaccented
 * ("SAO PAULO", "PADARIA SAO JOAO LTDA") while users type "São Paulo" or "padaria são joão", so
 * both sides are folded the same way before they meet.
 */

/** Words too common to narrow a name search; a query made only of them matches on none. */
const STOPWORDS = new Set(['de', 'da', 'do', 'das', 'dos', 'e', 'em', 'a', 'o', 'the', 'of', 'and']);

/** Lower case, accents removed, anything but letters and digits turned into single spaces. */
export function foldText(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** The distinct searchable words of a text, in order of first appearance. */
export function words(text: string | null | undefined): string[] {
  if (!text) return [];
  const out = new Set<string>();
  for (const word of foldText(text).split(' ')) {
    if (word.length > 1 && !STOPWORDS.has(word)) out.add(word);
  }
  return [...out];
}
