/** Layout fixes shared by the list screens. */

/** Lets the list's main column shrink inside the page (wide tables scroll inside the card instead of widening the page). */
export const LIST_SX = { minWidth: 0, '& .RaList-main': { minWidth: 0 }, '& .RaList-content': { minWidth: 0 } } as const;

/** A wrapping row of compact filter fields (the theme makes text fields full width by default). */
export const FILTER_BAR_SX = {
  display: 'flex',
  flexWrap: 'wrap',
  gap: 1,
  alignItems: 'center',
  '& .MuiFormControl-root': { width: 'auto', minWidth: 150, m: 0 },
} as const;

/** A compact DataTable: cells on one line, bold headers (wide tables scroll inside the card). */
export const TABLE_SX = {
  '& .RaDataTable-headerCell': { fontWeight: 600, whiteSpace: 'nowrap' },
  '& .RaDataTable-rowCell': { whiteSpace: 'nowrap' },
  '& .RaDataTable-tableWrapper': { overflowX: 'auto' },
} as const;
