import type { ReactNode } from 'react';
import { Box, Card, CardContent, Typography } from '@mui/material';

/** The centred card of the account screens (login, register, reset, setup). */
export function AuthCard({ title, children, width = 420 }: { title: ReactNode; children: ReactNode; width?: number }) {
  return (
    <Box sx={{ display: 'flex', justifyContent: 'center', alignItems: 'flex-start', py: { xs: 3, sm: 6 }, px: 2 }}>
      <Card sx={{ width: '100%', maxWidth: width, borderRadius: 3 }} variant="outlined">
        <CardContent sx={{ p: { xs: 2.5, sm: 4 } }}>
          <Typography variant="h5" component="h1" sx={{ fontWeight: 700, mb: 3, textAlign: 'center' }}>
            {title}
          </Typography>
          {children}
        </CardContent>
      </Card>
    </Box>
  );
}
