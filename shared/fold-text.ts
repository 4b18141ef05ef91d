/**
 * Folding of free text for matching: registry names are upper-case and mostly unaccented
 * ("SAO PAULO", "PADARIA SAO JOAO LTDA") while people type "São Paulo" or "padaria são joão",
 * and sheet headers come as "E-mail" or "Correo electrónico", so both sides are folded the same
 * way before they meet. Shared by the server and the add-on.
 */

const NON_ASCII = /[^\x00-\x7f]/;

/** Lower case, accents removed, anything but letters and digits turned into single spaces. */
export function foldText(text: string): string {
  // Registry text is mostly plain ASCII, which has no accents to take off (a million
  // establishments' names and partners are folded on every import).
  const unaccented = NON_ASCII.test(text) ? text.normalize('NFD').replace(/[\u0300-\u036f]/g, '') : text;
  return unaccented
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}
