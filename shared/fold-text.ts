/**
 * Folding of free text for matching: registry names are upper-case and mostly unaccented
 * ("SAO PAULO", "PADARIA SAO JOAO LTDA") while people type "São Paulo" or "padaria são joão",
 * and sheet headers come as "E-mail" or "Correo electrónico", so both sides are folded the same
 * way before they meet. Shared by the server and the add-on.
 */

/** Lower case, accents removed, anything but letters and digits turned into single spaces. */
export function foldText(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}
