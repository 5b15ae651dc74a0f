/**
 * Every view keeps its state in the URL's hash (`#/page/arg?key=value`), so a view can be
 * shared and reloaded as it is. Writing replaces the history entry without re-routing.
 */
export function writeViewState(path: string, params: URLSearchParams): void {
  const clean = new URLSearchParams();
  for (const [k, v] of params) if (v !== '') clean.append(k, v);
  const query = clean.toString();
  const hash = `#/${path}${query ? `?${query}` : ''}`;
  if (location.hash !== hash) history.replaceState(null, '', hash);
}
