import { TablePagination, type TablePaginationProps } from '@mui/material';
import { useListContext, useResourceContext, useTranslate } from 'react-admin';
import { PAGE_SIZES, writePageSize } from './pageSize';

export interface GwPaginationProps {
  /** The row count the pager shows; default the list's total. Lists without a total give their own. */
  count?: number;
  labelDisplayedRows?: TablePaginationProps['labelDisplayedRows'];
  labelRowsPerPage?: string;
}

/** Paging with the sizes 10/20/50/100; the chosen size is stored locally. */
export const GwPagination = ({ count, labelDisplayedRows, labelRowsPerPage }: GwPaginationProps) => {
  const translate = useTranslate();
  const resource = useResourceContext();
  const { page, perPage, total, setPage, setPerPage } = useListContext();
  return (
    <TablePagination
      component="div"
      count={count ?? total ?? 0}
      page={Math.max(0, (page ?? 1) - 1)}
      rowsPerPage={perPage ?? 10}
      rowsPerPageOptions={PAGE_SIZES as unknown as number[]}
      onPageChange={(_, p) => setPage(p + 1)}
      onRowsPerPageChange={(e) => {
        const size = Number(e.target.value);
        writePageSize(size, resource);
        setPerPage(size);
      }}
      labelRowsPerPage={labelRowsPerPage ?? translate('res.common.rows_per_page')}
      labelDisplayedRows={labelDisplayedRows ?? (({ from, to, count }) => translate('res.common.displayed_rows', { from, to, count }))}
    />
  );
};
