import { describe, expect, it } from 'vitest';
import { renderToStaticMarkup } from 'react-dom/server';
import { ListContextProvider, type ListControllerResult } from 'react-admin';
import { GwTable, type Column } from './GwTable';
import { ColorTag } from './ColorTag';
import { groupByTag, isTagRow } from '../channels/channelTags';

type Row = { id: string | number; name: string; [k: string]: unknown };

function render(data: Row[], opts: { hidden?: string[]; selectedIds?: (string | number)[] } = {}) {
  const ctx = {
    data,
    total: data.length,
    isPending: false,
    isFetching: false,
    isLoading: false,
    selectedIds: opts.selectedIds ?? [],
    onToggleItem: () => undefined,
    onSelect: () => undefined,
    onUnselectItems: () => undefined,
  } as unknown as ListControllerResult;
  const columns: Column<Row>[] = [
    { key: 'id', label: 'col.id', render: (r) => String(r.id) },
    { key: 'name', label: 'col.name', render: (r) => <ColorTag tone="green" label={r.name} /> },
    { key: 'secret', label: 'col.secret', render: () => 'SECRET-CELL' },
  ];
  return renderToStaticMarkup(
    <ListContextProvider value={ctx}>
      <GwTable<Row>
        columns={columns}
        hidden={opts.hidden}
        selectable
        childrenOf={(r) => (isTagRow(r) ? (r.children as Row[]) : undefined)}
        canSelect={(r) => !isTagRow(r)}
      />
    </ListContextProvider>,
  );
}

describe('GwTable', () => {
  const channels = [
    { id: 1, name: 'alpha', tag: 't' },
    { id: 2, name: 'beta', tag: '' },
    { id: 3, name: 'gamma', tag: 't' },
  ];

  it('renders headers, cells and one checkbox per selectable row plus select-all', () => {
    const html = render(channels);
    expect(html).toContain('col.id');
    expect(html).toContain('alpha');
    expect(html).toContain('gamma');
    expect(html.match(/type="checkbox"/g)?.length).toBe(4);
  });

  it('leaves hidden columns out', () => {
    const html = render(channels, { hidden: ['secret'] });
    expect(html).not.toContain('SECRET-CELL');
    expect(html).not.toContain('col.secret');
  });

  it('tag rows are collapsed: children are not rendered and tag rows have no checkbox', () => {
    const rows = groupByTag(channels) as Row[];
    const html = render(rows);
    expect(html).toContain('beta');
    expect(html).not.toContain('alpha');
    expect(html).toContain('aria-label="expand"');
    // select-all + the untagged channel
    expect(html.match(/type="checkbox"/g)?.length).toBe(2);
  });

  it('shows the empty text without rows', () => {
    expect(render([])).toContain('res.common.empty');
  });
});
