import { Typography } from '@mui/material';
import { useTranslate } from 'react-admin';

/** What an empty DataTable shows: one centred line (an i18n key). */
export const EmptyText = ({ text }: { text: string }) => {
  const translate = useTranslate();
  return (
    <Typography color="text.secondary" sx={{ p: 4, textAlign: 'center' }}>
      {translate(text)}
    </Typography>
  );
};
