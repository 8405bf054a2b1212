/** The github auth method module (type "github"), mounted under auth/. */
import type { EngineModule } from '../../framework/engine.js';
import { GithubEngine } from './github-engine.js';
import { githubRoutes } from './routes.js';

/** github: people log in with a GitHub personal access token; organization and team membership decide. */
export const githubMethod: EngineModule<GithubEngine> = {
  type: 'github',
  accessorPrefix: 'auth_github',
  description: 'GitHub personal access token login',
  routes: githubRoutes,
  async create(env) {
    return new GithubEngine(env);
  },
};
