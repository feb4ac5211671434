import { Fragment, useState, type ReactNode } from 'react';
import {
  Box,
  Checkbox,
  IconButton,
  LinearProgress,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  Typography,
} from '@mui/material';
import KeyboardArrowDownIcon from '@mui/icons-material/KeyboardArrowDown';
import KeyboardArrowRightIcon from '@mui/icons-material/KeyboardArrowRight';
import { useListContext, useTranslate, type Identifier, type RaRecord } from 'react-admin';

export interface Column<T> {
  key: string;
  /** i18n key of the header */
  label: string;
  render: (row: T, child: boolean) => ReactNode;
  width?: number | string;
  align?: 'left' | 'right' | 'center';
  /** columns that cannot be hidden in the column settings */
  fixed?: boolean;
}

interface GwTableProps<T extends RaRecord> {
  columns: Column<T>[];
  /** keys of hidden columns */
  hidden?: string[];
  selectable?: boolean;
  /** rows that can be expanded return their children */
  childrenOf?: (row: T) => T[] | undefined;
  /** whether a row's checkbox is offered (tag rows are not selectable) */
  canSelect?: (row: T) => boolean;
  emptyText?: string;
  dense?: boolean;
}

/**
 * A compact MUI table bound to the surrounding react-admin list context: selection uses the
 * context's selectedIds, rows may expand into child rows (channel tag mode).
 */
export function GwTable<T extends RaRecord>({
  columns,
  hidden = [],
  selectable = false,
  childrenOf,
  canSelect = () => true,
  emptyText = 'res.common.empty',
  dense = true,
}: GwTableProps<T>) {
  const translate = useTranslate();
  const { data, isPending, isFetching, selectedIds = [], onToggleItem, onSelect } = useListContext<T>();
  const [open, setOpen] = useState<Record<string, boolean>>({});
  const visible = columns.filter((c) => !hidden.includes(c.key));
  const rows = data ?? [];
  const selectableIds: Identifier[] = [];
  for (const r of rows) {
    const kids = childrenOf?.(r);
    if (kids) kids.forEach((k) => canSelect(k) && selectableIds.push(k.id));
    else if (canSelect(r)) selectableIds.push(r.id);
  }
  const allSelected = selectableIds.length > 0 && selectableIds.every((id) => selectedIds.includes(id));
  const someSelected = selectableIds.some((id) => selectedIds.includes(id));
  const expandable = !!childrenOf && rows.some((r) => !!childrenOf(r));

  const renderRow = (row: T, child: boolean) => {
    const kids = child ? undefined : childrenOf?.(row);
    const key = String(row.id);
    return (
      <Fragment key={(child ? 'c-' : 'r-') + key}>
        <TableRow hover sx={child ? { bgcolor: 'action.hover' } : undefined}>
          {selectable && (
            <TableCell padding="checkbox">
              {!kids && canSelect(row) ? (
                <Checkbox size="small" checked={selectedIds.includes(row.id)} onChange={() => onToggleItem?.(row.id)} />
              ) : null}
            </TableCell>
          )}
          {expandable && (
            <TableCell padding="checkbox">
              {kids ? (
                <IconButton size="small" onClick={() => setOpen((o) => ({ ...o, [key]: !o[key] }))} aria-label="expand">
                  {open[key] ? <KeyboardArrowDownIcon fontSize="small" /> : <KeyboardArrowRightIcon fontSize="small" />}
                </IconButton>
              ) : null}
            </TableCell>
          )}
          {visible.map((c) => (
            <TableCell key={c.key} align={c.align} sx={{ width: c.width, whiteSpace: 'nowrap' }}>
              {c.render(row, child)}
            </TableCell>
          ))}
        </TableRow>
        {kids && open[key] && kids.map((k) => renderRow(k, true))}
      </Fragment>
    );
  };

  return (
    <Box sx={{ position: 'relative' }}>
      {isFetching && <LinearProgress sx={{ position: 'absolute', top: 0, left: 0, right: 0 }} />}
      <TableContainer sx={{ overflowX: 'auto' }}>
        <Table size={dense ? 'small' : 'medium'}>
          <TableHead>
            <TableRow>
              {selectable && (
                <TableCell padding="checkbox">
                  <Checkbox
                    size="small"
                    checked={allSelected}
                    indeterminate={someSelected && !allSelected}
                    onChange={() => onSelect?.(allSelected ? [] : selectableIds)}
                  />
                </TableCell>
              )}
              {expandable && <TableCell padding="checkbox" />}
              {visible.map((c) => (
                <TableCell key={c.key} align={c.align} sx={{ fontWeight: 600, whiteSpace: 'nowrap' }}>
                  {translate(c.label)}
                </TableCell>
              ))}
            </TableRow>
          </TableHead>
          <TableBody>{rows.map((r) => renderRow(r, false))}</TableBody>
        </Table>
      </TableContainer>
      {!isPending && rows.length === 0 && (
        <Typography color="text.secondary" sx={{ p: 4, textAlign: 'center' }}>
          {translate(emptyText)}
        </Typography>
      )}
      {isPending && <Box sx={{ p: 4 }} />}
    </Box>
  );
}
