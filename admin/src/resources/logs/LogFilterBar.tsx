import { Box, Button, IconButton } from '@mui/material';
import RefreshIcon from '@mui/icons-material/Refresh';
import { Form, SelectInput, TextInput, useListContext, useRefresh, useTranslate } from 'react-admin';
import { useFormContext } from 'react-hook-form';
import { FILTER_BAR_SX } from '../shared/styles';
import { LOG_TYPES, logTypeKey } from './logDisplay';
import { EMPTY_LOG_FILTER, fromFilter, toFilter, type FilterValues } from './logFilters';

const TYPE_CHOICES = LOG_TYPES.filter((t) => t !== 0).map((t) => ({ id: t, name: `res.log.type.${logTypeKey(t)}` }));
const DATE_LABEL = { inputLabel: { shrink: true } };

/**
 * The log filters: the form starts from the list's filters (kept in the URL) and applies them on
 * search; channel id and username are admin filters.
 */
export const LogFilterBar = ({ admin }: { admin: boolean }) => {
  const { filterValues, setFilters } = useListContext();
  const current = fromFilter(filterValues ?? {});
  return (
    <Form
      key={JSON.stringify(filterValues ?? {})}
      defaultValues={current}
      onSubmit={(values: Record<string, unknown>) => setFilters(toFilter(values as FilterValues, admin), {})}
      noValidate
    >
      <Box sx={{ ...FILTER_BAR_SX, p: 2 }}>
        <SelectInput
          source="type"
          label="res.log.fields.type"
          choices={TYPE_CHOICES}
          emptyValue={0}
          emptyText="res.log.type.all"
          helperText={false}
          sx={{ minWidth: 120 }}
        />
        <TextInput source="token_name" label="res.log.fields.token_name" helperText={false} />
        <TextInput source="model_name" label="res.log.fields.model_name" helperText={false} />
        <TextInput source="start" type="datetime-local" label="res.log.start" helperText={false} slotProps={DATE_LABEL} />
        <TextInput source="end" type="datetime-local" label="res.log.end" helperText={false} slotProps={DATE_LABEL} />
        <TextInput source="group" label="res.log.fields.group" helperText={false} sx={{ width: 120 }} />
        {admin && <TextInput source="channel" label="res.log.channel_id" helperText={false} sx={{ width: 110 }} />}
        {admin && <TextInput source="username" label="res.log.fields.username" helperText={false} sx={{ width: 140 }} />}
        <FilterButtons />
      </Box>
    </Form>
  );
};

const FilterButtons = () => {
  const translate = useTranslate();
  const refresh = useRefresh();
  const { setFilters } = useListContext();
  const { reset } = useFormContext();
  return (
    <>
      <Button type="submit" variant="contained">
        {translate('res.common.search')}
      </Button>
      <Button
        onClick={() => {
          reset(EMPTY_LOG_FILTER);
          setFilters({}, {});
        }}
      >
        {translate('res.common.reset')}
      </Button>
      <IconButton onClick={() => refresh()}>
        <RefreshIcon />
      </IconButton>
    </>
  );
};
