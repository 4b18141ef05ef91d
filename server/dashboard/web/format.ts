/** How numbers, times and days read on the dashboard: the browser's language, UTC days. */
const number = new Intl.NumberFormat();
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const day = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });

export const formatNumber = (n: number) => number.format(n);

export const formatTime = (iso: string | null | undefined) => (iso ? dateTime.format(new Date(iso)) : '—');

/** `YYYY-MM-DD` (a UTC day) as "Nov 24". */
export const formatDay = (date: string) => day.format(new Date(`${date}T00:00:00Z`));

/** A signed amount of credits: "+500", "−3". */
export const formatAmount = (n: number) => (n > 0 ? `+${number.format(n)}` : n < 0 ? `−${number.format(-n)}` : '0');

/** Whole days from now until `iso`, never below 0 (a trial that ends in 3 h has 1 day left). */
export function daysLeft(iso: string, now = Date.now()): number {
  return Math.max(0, Math.ceil((Date.parse(iso) - now) / 86_400_000));
}

export const plural = (n: number, one: string, many = `${one}s`) => `${formatNumber(n)} ${n === 1 ? one : many}`;
