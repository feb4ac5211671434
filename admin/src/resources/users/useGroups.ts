import { useQuery } from '@tanstack/react-query';
import { useGateway } from '../shared/api';

const NO_GROUPS: string[] = [];

/** The groups an administrator can assign (GET /api/group/), loaded once and shared by the user screens. */
export function useGroups(): string[] {
  const dp = useGateway();
  const { data } = useQuery({ queryKey: ['gateway', 'groups'], queryFn: () => dp.getGroups().then((r) => r.data) });
  return data ?? NO_GROUPS;
}
