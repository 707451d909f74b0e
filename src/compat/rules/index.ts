/** Every keyword comparer, in the order they run. Adding a keyword = adding a rule here. */
import { additionalItemsRule, additionalPropertiesRule } from './additional-content.js';
import { arrayItemsRule, arrayTupleRule } from './array-items.js';
import { combinedRule } from './combined.js';
import { constRule, enumRule } from './enum-const.js';
import { metadataRule } from './metadata.js';
import { multipleOfRule } from './multiple-of.js';
import { notRule } from './not.js';
import { numberTypeRule } from './number-type.js';
import { numericBoundsRule } from './numeric-bounds.js';
import { objectDependenciesRule } from './object-dependencies.js';
import {
  objectPropertiesRule,
  objectRequiredRule,
  patternPropertiesRule,
} from './object-properties.js';
import type { ShapeRule } from './shape-rule.js';
import { stringPatternRule } from './string-pattern.js';
import { uniqueItemsRule } from './unique-items.js';

export const SHAPE_RULES: readonly ShapeRule[] = [
  metadataRule,
  stringPatternRule,
  multipleOfRule,
  numberTypeRule,
  enumRule,
  constRule,
  combinedRule,
  notRule,
  objectRequiredRule,
  objectPropertiesRule,
  patternPropertiesRule,
  objectDependenciesRule,
  additionalPropertiesRule,
  arrayItemsRule,
  arrayTupleRule,
  additionalItemsRule,
  numericBoundsRule,
  uniqueItemsRule,
];
