/**
 * The language a campaign's built-in messages and default cadence are written in. Portuguese is
 * the default; a language the built-in writer does not know falls back to Portuguese, and the
 * campaign carries a note saying so (a model, when configured, still writes in the language asked).
 */
import { foldText } from '../../shared/fold-text.ts';

export type WriterLanguage = 'pt' | 'en' | 'es';

const NAMES: Record<WriterLanguage, string> = { pt: 'Portuguese', en: 'English', es: 'Spanish' };

/** `pt-BR`, `Portuguese`, `português` → pt; `en`, `English`, `inglês` → en; `es`, `Spanish`, `español` → es. */
function recognised(language: string): WriterLanguage | undefined {
  const l = foldText(language);
  if (/^(pt|portugu|brazil|brasil)/.test(l)) return 'pt';
  if (/^(en|ingles)/.test(l)) return 'en';
  if (/^(es|spanish|espan|castellano)/.test(l)) return 'es';
  return undefined;
}

/** The built-in writer's language for a campaign's `language` (absent or blank: Portuguese). */
export const languageOf = (language: string | undefined): WriterLanguage =>
  (language?.trim() && recognised(language)) || 'pt';

/** The campaign's note when its language is one the built-in writer does not know; otherwise undefined. */
export function languageNote(language: string | undefined): string | undefined {
  if (!language?.trim() || recognised(language)) return undefined;
  return `The built-in writer does not know the language ${JSON.stringify(language.trim())}: its messages and the default cadence are in ${NAMES.pt}.`;
}
