import { h } from './dom.js';

/** Offers `data` as a file download named `name`. */
export function download(name: string, data: Blob): void {
  const url = URL.createObjectURL(data);
  const a = h('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  // Not at once: a browser may start reading the file only after the click has returned.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
