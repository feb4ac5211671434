import { Link as RouterLink } from 'react-router-dom';
import { useTranslate } from 'react-admin';
import { Box, Button, Typography } from '@mui/material';

export function NotFound() {
  const translate = useTranslate();
  return (
    <Box sx={{ textAlign: 'center', py: 10 }} data-testid="not-found">
      <Typography variant="h2" color="text.secondary" sx={{ fontWeight: 700 }}>
        {translate('app.not_found.title')}
      </Typography>
      <Typography sx={{ mt: 2, mb: 3 }}>{translate('app.not_found.message')}</Typography>
      <Button component={RouterLink} to="/" variant="outlined">
        {translate('app.not_found.back')}
      </Button>
    </Box>
  );
}
