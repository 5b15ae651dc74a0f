/**
 * A list that renders only the rows in view (plus a few), so 50 000 rows cost what 40 do.
 * Rows have one fixed height; data changes are applied at most once per animation frame.
 */
export class VirtualList<T> {
  readonly element: HTMLDivElement;
  private readonly spacer: HTMLDivElement;
  private readonly rows: HTMLDivElement;
  private items: T[] = [];
  private frame = 0;
  /** Keep the view at the bottom while new rows arrive (a tail), unless the user scrolled up. */
  follow = false;

  constructor(
    private readonly rowHeight: number,
    private readonly renderRow: (item: T, el: HTMLDivElement) => void,
  ) {
    this.element = document.createElement('div');
    this.element.className = 'vlist';
    this.spacer = document.createElement('div');
    this.rows = document.createElement('div');
    this.rows.className = 'vlist-rows';
    this.spacer.append(this.rows);
    this.element.append(this.spacer);
    this.element.addEventListener('scroll', () => this.schedule());
  }

  get length(): number {
    return this.items.length;
  }

  setItems(items: T[]): void {
    this.items = items;
    this.schedule();
  }

  /** Appends rows, keeping at most `cap` (the oldest go). */
  append(items: T[], cap: number): void {
    if (items.length === 0) return;
    for (const item of items) this.items.push(item);
    if (this.items.length > cap) this.items.splice(0, this.items.length - cap);
    this.schedule();
  }

  schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  private render(): void {
    const total = this.items.length * this.rowHeight;
    this.spacer.style.height = `${total}px`;
    if (this.follow) this.element.scrollTop = total;
    const viewport = this.element.clientHeight || 600;
    const first = Math.max(0, Math.floor(this.element.scrollTop / this.rowHeight) - 5);
    const count = Math.min(this.items.length - first, Math.ceil(viewport / this.rowHeight) + 10);
    while (this.rows.children.length < count) {
      const row = document.createElement('div');
      row.className = 'vrow';
      row.style.height = `${this.rowHeight}px`;
      this.rows.append(row);
    }
    while (this.rows.children.length > Math.max(count, 0)) this.rows.lastElementChild!.remove();
    this.rows.style.transform = `translateY(${first * this.rowHeight}px)`;
    for (let i = 0; i < count; i++) this.renderRow(this.items[first + i], this.rows.children[i] as HTMLDivElement);
  }
}
