// The alert page's escalation policy (issue 45 §3): the current step's response
// procedure and when the next step fires. `en` is the reference, every other language
// has exactly its keys.
export const en = {
  'escalation.heading': 'Response procedure',
  'escalation.policy': 'Policy "{name}": step {n} of {count}',
  'escalation.notYet': 'Policy "{name}": no step has fired yet ({count} in all).',
  'escalation.noInstructions': 'This step has no instructions.',
  'escalation.next': 'Next step: {at} ({in})',
  'escalation.nextFirst': 'First step: {at} ({in})',
  'escalation.inMinutes': 'in {n} min',
  'escalation.now': 'due now',
  'escalation.last': 'This was the last step.',
  'escalation.stopped': 'Escalation stopped ({status}).',
  'escalation.deleted': 'The policy was deleted: no further step fires.',
  'timeline.EscalationStep': 'Escalation step',
  'timeline.step': 'step {n}',
} as const;

export const fr: Record<keyof typeof en, string> = {
  'escalation.heading': 'Procédure à suivre',
  'escalation.policy': 'Politique « {name} » : étape {n} sur {count}',
  'escalation.notYet': 'Politique « {name} » : aucune étape déclenchée pour l’instant ({count} en tout).',
  'escalation.noInstructions': 'Cette étape n’a pas de consignes.',
  'escalation.next': 'Étape suivante : {at} ({in})',
  'escalation.nextFirst': 'Première étape : {at} ({in})',
  'escalation.inMinutes': 'dans {n} min',
  'escalation.now': 'maintenant',
  'escalation.last': 'C’était la dernière étape.',
  'escalation.stopped': 'Escalade arrêtée ({status}).',
  'escalation.deleted': 'La politique a été supprimée : aucune autre étape ne se déclenchera.',
  'timeline.EscalationStep': 'Étape d’escalade',
  'timeline.step': 'étape {n}',
};
