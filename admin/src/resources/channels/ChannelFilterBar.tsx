import { Box, Button } from '@mui/material';
import { Form, SelectInput, TextInput, useListContext, useTranslate } from 'react-admin';
import { useFormContext } from 'react-hook-form';
import { FILTER_BAR_SX } from '../shared/styles';
import { useChannelGroups } from './useChannelOps';

const EMPTY = { keyword: '', model: '', group: '' };
const text = (v: unknown) => (v === undefined || v === null ? '' : String(v));

/** Keyword, model and group search: the form starts from the list's filters (kept in the URL). */
export const ChannelFilterBar = () => {
  const { filterValues, setFilters } = useListContext();
  const groups = useChannelGroups();
  const current = { keyword: text(filterValues?.keyword), model: text(filterValues?.model), group: text(filterValues?.group) };
  const search = (values: Record<string, unknown>) =>
    setFilters(
      {
        ...filterValues,
        keyword: text(values.keyword).trim() || undefined,
        group: text(values.group) || undefined,
        model: text(values.model).trim() || undefined,
      },
      {},
    );
  return (
    <Form key={JSON.stringify(current)} defaultValues={current} onSubmit={search} noValidate>
      <Box sx={{ ...FILTER_BAR_SX, px: 2, pb: 2 }}>
        <TextInput source="keyword" label="res.channel.search_keyword" helperText={false} sx={{ minWidth: 260 }} />
        <TextInput source="model" label="res.channel.search_model" helperText={false} />
        <SelectInput
          source="group"
          label="res.channel.fields.group"
          choices={groups.map((g) => ({ id: g, name: g }))}
          translateChoice={false}
          emptyValue=""
          emptyText="res.common.all"
          helperText={false}
          sx={{ minWidth: 140 }}
        />
        <FilterButtons />
      </Box>
    </Form>
  );
};

const FilterButtons = () => {
  const translate = useTranslate();
  const { setFilters } = useListContext();
  const { reset } = useFormContext();
  return (
    <>
      <Button type="submit" variant="contained" color="primary">
        {translate('res.common.search')}
      </Button>
      <Button
        onClick={() => {
          reset(EMPTY);
          setFilters({}, {});
        }}
      >
        {translate('res.common.reset')}
      </Button>
    </>
  );
};
