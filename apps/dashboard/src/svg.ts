/** The SVG namespace: elements made in it, and the `xmlns` of a drawing saved as a file. */
export const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element with its attributes (and text), as `h` makes HTML ones. */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  text?: string,
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

/** A drawing as the text of a standalone `.svg` file. */
export function svgFile(el: SVGSVGElement): Blob {
  const text = `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(el)}\n`;
  return new Blob([text], { type: 'image/svg+xml' });
}
