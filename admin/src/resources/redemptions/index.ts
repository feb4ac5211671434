export { RedemptionList } from './RedemptionList';
