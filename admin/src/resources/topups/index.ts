export { TopupOrderList } from './TopupOrderList';
